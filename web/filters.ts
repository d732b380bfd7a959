/**
 * A list page's filter bar, bound to the address bar: the values start from the URL's params, each
 * control changes one of them (a `live` search box as the user types, after a pause), and the
 * non-empty values are the query the page sends, exports and writes back into the URL.
 */
import { downloadUrl } from "./api.ts";
import { type Child, debounce, field, h, select } from "./dom.ts";

/** One filter: a select when it has `options`, else a text input (`search`: a search box). */
export interface FilterSpec<K extends string> {
  key: K;
  label: string;
  options?: Array<string | [string, string]>;
  placeholder?: string;
  search?: boolean;
  /** Filter as the user types (debounced) rather than on change. */
  live?: boolean;
  /** The control's id (default: the prefix and the key). */
  id?: string;
}

export type FilterControl = HTMLInputElement | HTMLSelectElement;

/** How long a live search box waits after the last key. */
const TYPING_PAUSE_MS = 250;

export class Filter<K extends string> {
  readonly values: Record<K, string>;
  readonly controls: Record<K, FilterControl>;

  /** `onChange(key, value)` runs when the user changes a control (the value is already set). */
  constructor(
    readonly specs: readonly FilterSpec<K>[],
    params: URLSearchParams,
    idPrefix: string,
    onChange: (key: K, value: string) => void,
  ) {
    this.values = Object.fromEntries(specs.map((s) => [s.key, params.get(s.key) ?? ""])) as Record<K, string>;
    this.controls = {} as Record<K, FilterControl>;
    for (const spec of specs) {
      const k = spec.key;
      const el: FilterControl = spec.options
        ? select(k, spec.options, this.values[k])
        : h("input", {
            type: spec.search ? "search" : "text",
            name: k,
            value: this.values[k],
            placeholder: spec.placeholder ?? "",
          });
      el.id = spec.id ?? `${idPrefix}${k}`;
      const fire = () => {
        this.values[k] = el.value.trim();
        onChange(k, this.values[k]);
      };
      if (spec.live) el.addEventListener("input", debounce(fire, TYPING_PAUSE_MS));
      else el.addEventListener("change", fire);
      this.controls[k] = el;
    }
  }

  /** The values that are set, as query parameters. */
  query(): Record<string, string> {
    const q: Record<string, string> = {};
    for (const { key } of this.specs) if (this.values[key]) q[key] = this.values[key];
    return q;
  }

  /** True when any filter is set. */
  any(): boolean {
    return this.specs.some(({ key }) => this.values[key] !== "");
  }

  /** Set a filter from the page (a chip, a tag, a saved rule's name): the control follows. */
  set(key: K, value: string) {
    this.values[key] = value;
    this.controls[key].value = value;
  }

  clear() {
    for (const { key } of this.specs) this.set(key, "");
  }

  /** Each filter's labelled field, in order. */
  field(key: K): HTMLElement {
    return field(this.specs.find((s) => s.key === key)!.label, this.controls[key]);
  }

  fields(keys: readonly K[] = this.specs.map((s) => s.key)): HTMLElement[] {
    return keys.map((k) => this.field(k));
  }
}

/** The filter bar's form (`label` names it for assistive technology); Enter does not submit it. */
export function filterForm(label: string, ...children: Child[]): HTMLFormElement {
  return h(
    "form",
    { class: "filters", role: "search", "aria-label": label, onsubmit: (e: Event) => e.preventDefault() },
    ...children,
  );
}

/**
 * "Export CSV" and "Export JSON" of `path` (`/findings/export`): `update(query)` points them at the
 * current filter. The files are named `<file>.csv` and `<file>.json`, the links' ids `<id>-csv`, `<id>-json`.
 */
export function exportLinks(path: string, file: string, id: string) {
  const link = (format: "csv" | "json") =>
    h(
      "a",
      { class: "btn", id: `${id}-${format}`, download: `${file}.${format}` },
      `Export ${format.toUpperCase()}`,
    );
  const csv = link("csv");
  const json = link("json");
  return {
    links: [csv, json],
    update(query: Record<string, string>) {
      csv.href = downloadUrl(path, { ...query, format: "csv" });
      json.href = downloadUrl(path, { ...query, format: "json" });
    },
  };
}
