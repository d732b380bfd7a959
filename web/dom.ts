/**
 * A tiny DOM builder. Text is always set as text (never parsed as HTML), so values from the API
 * cannot inject markup.
 */
export type Child = Node | string | number | null | undefined | false | Child[];
type Handler = (ev: Event) => void;
export type Props = Record<
  string,
  string | number | boolean | null | undefined | Handler | Record<string, string>
>;

const PROPS = new Set(["value", "checked", "disabled", "selected", "indeterminate", "open"]);

function applyProps(el: Element, props: Props | null | undefined) {
  if (!props) return;
  for (const [k, v] of Object.entries(props)) {
    if (v === null || v === undefined || v === false) {
      if (PROPS.has(k)) (el as unknown as Record<string, unknown>)[k] = false;
      continue;
    }
    if (k.startsWith("on") && typeof v === "function") {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (k === "dataset" && typeof v === "object") {
      for (const [dk, dv] of Object.entries(v)) (el as HTMLElement).dataset[dk] = dv;
    } else if (PROPS.has(k)) {
      (el as unknown as Record<string, unknown>)[k] = v;
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
}

function append(el: Node, children: Child[]) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
}

/** `h("button", { class: "btn", onclick }, "Save")` */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  applyProps(el, props);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";
/** SVG element: `s("rect", { x: 0, y: 0, width: 10, height: 10 })` */
export function s(tag: string, props?: Props | null, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  applyProps(el, props);
  append(el, children);
  return el;
}

/** Replace all children of `el`. */
export function mount(el: Element, ...children: Child[]) {
  el.replaceChildren();
  append(el, children);
}

let idSeq = 0;
/** A unique id for label/control pairs. */
export function uid(prefix = "f"): string {
  return `${prefix}-${++idSeq}`;
}

/** A labelled form field: label above the control. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  if (!control.id) control.id = uid();
  return h(
    "div",
    { class: "field" },
    h("label", { for: control.id }, label),
    control,
    hint ? h("small", { class: "hint" }, hint) : null,
  );
}

export function select(
  name: string,
  options: Array<string | [string, string]>,
  value: string,
  props: Props = {},
): HTMLSelectElement {
  return h(
    "select",
    { name, ...props },
    options.map((o) => {
      const [v, text] = Array.isArray(o) ? o : [o, o];
      return h("option", { value: v, selected: v === value }, text);
    }),
  );
}

/** Relative time such as "3 min ago". */
export function ago(iso: string | null | undefined): string {
  if (!iso) return "never";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** Local date-time, short. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: "numeric",
    month: "short",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

export function num(n: number | null | undefined): string {
  return typeof n === "number" ? n.toLocaleString() : "0";
}

export function badge(text: string, kind = text): HTMLElement {
  return h("span", { class: `badge b-${kind.replace(/[^a-z0-9_-]/gi, "")}` }, text);
}

/** An empty state with a hint. */
export function empty(title: string, ...body: Child[]): HTMLElement {
  return h("div", { class: "empty" }, h("p", { class: "empty-title" }, title), ...body);
}

/** The "connect your first tool" hint shown wherever there is no data yet. */
export function connectHint(proxy = "http://127.0.0.1:8080"): HTMLElement {
  return h(
    "div",
    { class: "connect-hint" },
    h("p", null, "Point a coding tool at sluice and its requests show up here, for example:"),
    h("pre", null, h("code", null, `export ANTHROPIC_BASE_URL=${proxy}\nclaude`)),
    h("p", null, h("a", { href: "#/connect" }, "See how to connect every supported tool →")),
  );
}

/**
 * `text` with a line-break opportunity after each `_ / . : ? & =` and inside camelCase, so that a
 * long identifier, path or URL in a narrow cell wraps between its parts rather than mid-word (the
 * text is unchanged).
 */
export function breakable(text: string): Child[] {
  const out: Child[] = [];
  for (const part of text.split(/(?<=[_/.:?&=])|(?<=[a-z])(?=[A-Z])/)) {
    if (out.length > 0) out.push(h("wbr"));
    out.push(part);
  }
  return out;
}

/** A page's heading row: the `<h1>` title, then what stands beside it (counts, buttons). */
export function pageHead(title: Child, ...rest: Child[]): HTMLElement {
  return h("div", { class: "page-head" }, h("h1", null, title), ...rest);
}

/** A term and its value in a `<dl class="kv">`: "—" for no value. */
export function kv(k: string, v: unknown): HTMLElement[] {
  return [h("dt", null, k), h("dd", null, v === null || v === undefined || v === "" ? "—" : String(v))];
}

/** A small toggle button: `aria-pressed` says whether its choice is the current one. */
export function chip(
  label: string,
  pressed: boolean,
  onclick: () => void,
  props: Props = {},
): HTMLButtonElement {
  return h(
    "button",
    { class: "btn small", type: "button", "aria-pressed": pressed ? "true" : "false", ...props, onclick },
    label,
  );
}

/**
 * One chip per choice, of which one is pressed: a click presses it, releases the others and calls
 * `pick`. Each button carries its choice in `data-<key>`.
 */
export function choiceChips<T extends string | number>(
  choices: readonly T[],
  current: T,
  key: string,
  label: (c: T) => string,
  pick: (c: T) => void,
): HTMLButtonElement[] {
  const buttons = choices.map((c) =>
    chip(
      label(c),
      c === current,
      () => {
        for (const b of buttons)
          b.setAttribute("aria-pressed", b.dataset[key] === String(c) ? "true" : "false");
        pick(c);
      },
      { dataset: { [key]: String(c) } },
    ),
  );
  return buttons;
}

/** A table in its scrolling wrapper: `head` the header cells, `body` what the tbody holds (the rows). */
export function dataTable(props: Props | null, head: Child[], ...body: Child[]): HTMLElement {
  return h(
    "div",
    { class: "table-wrap" },
    h("table", props, h("thead", null, h("tr", null, ...head)), h("tbody", null, ...body)),
  );
}

/** Options of a filter: "any" (no filter), then each value as itself. */
export function anyOf(values: readonly string[]): [string, string][] {
  return [["", "any"], ...values.map((v) => [v, v] as [string, string])];
}

/** Options of a `days` filter. */
export const PERIODS: [string, string][] = [
  ["", "all time"],
  ["1", "today"],
  ["7", "7 days"],
  ["30", "30 days"],
  ["90", "90 days"],
];

/** Where a paged list is: the first row shown, rows per page, and how many there are. */
export interface Paging {
  offset: number;
  limit: number;
  total: number;
}

/** A list that is shown a page at a time and reads its page again on `load`. */
export interface PagedList extends Paging {
  load(): Promise<void>;
}

/** Show another page of `list` (`pagerControls`' `go`). */
export function turnPage(list: PagedList): (offset: number, limit: number) => void {
  return (offset, limit) => {
    list.offset = offset;
    list.limit = limit;
    void list.load();
  };
}

/**
 * A paged list's pager: "Rows per page" (when `sizes` says its id and choices), `status` (where the
 * page is), "← Previous" and "Next →". `go(offset, limit)` shows another page; a new page size
 * starts from the first row.
 */
export function pagerControls(
  p: Paging,
  status: string,
  go: (offset: number, limit: number) => void,
  sizes?: { id: string; sizes: readonly number[] },
): HTMLElement[] {
  const { offset, limit, total } = p;
  const button = (label: string, disabled: boolean, to: number) =>
    h("button", { class: "btn", type: "button", disabled, onclick: () => go(to, limit) }, label);
  return [
    sizes
      ? field(
          "Rows per page",
          select("limit", sizes.sizes.map(String), String(limit), {
            id: sizes.id,
            onchange: (e: Event) => go(0, Number((e.target as HTMLSelectElement).value)),
          }),
        )
      : null,
    h("span", { class: "muted" }, status),
    button("← Previous", offset === 0, Math.max(0, offset - limit)),
    button("Next →", offset + limit >= total, offset + limit),
  ].filter((el): el is HTMLElement => el !== null);
}

/** Debounce for search boxes. */
export function debounce<A extends unknown[]>(fn: (...a: A) => void, ms: number): (...a: A) => void {
  let t: ReturnType<typeof setTimeout> | undefined;
  return (...a: A) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

/** `fn` once, `ms` after the first call of a burst: the calls until it runs add nothing (live refreshes). */
export function coalesce(fn: () => void, ms: number): () => void {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      pending = false;
      fn();
    }, ms);
  };
}

/** The first characters of a session id, enough to tell sessions apart (the full id goes in a title). */
export function shortId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 12)}…` : id;
}

/** A masked preview with long runs of `*` shortened for tables: `ghp_****…****kPUh`. */
export function shortPreview(preview: string): string {
  return preview.replace(/\*{9,}/g, "****…****");
}
