/**
 * Small inline-SVG charts: a daily trend (bars) and horizontal breakdown bars. Colours come from CSS
 * variables so both themes work; every chart has a text alternative.
 */
import { h, s } from "./dom.ts";

export interface Point {
  date: string;
  count: number;
}

/** Bars per day with a y axis and a few date labels. */
export function trendChart(points: Point[], label: string, width = 720): HTMLElement {
  const W = Math.max(240, Math.round(width));
  const H = 200;
  const pad = { l: 36, r: 8, t: 10, b: 24 };
  const max = Math.max(1, ...points.map((p) => p.count));
  const niceMax = niceCeil(max);
  const iw = W - pad.l - pad.r;
  const ih = H - pad.t - pad.b;
  const bw = points.length ? iw / points.length : iw;
  const total = points.reduce((a, p) => a + p.count, 0);
  const svg = s(
    "svg",
    {
      viewBox: `0 0 ${W} ${H}`,
      class: "chart",
      role: "img",
      "aria-label": `${label}: ${total} findings over ${points.length} days, peak ${max} per day`,
    },
    [0, 0.5, 1].map((f) => {
      const y = pad.t + ih - ih * f;
      return [
        s("line", { x1: pad.l, x2: W - pad.r, y1: y, y2: y, class: "grid" }),
        Number.isInteger(niceMax * f)
          ? s("text", { x: pad.l - 6, y: y + 4, class: "axis", "text-anchor": "end" }, String(niceMax * f))
          : null,
      ];
    }),
    points.map((p, i) => {
      const bh = (p.count / niceMax) * ih;
      const x = pad.l + i * bw;
      return s(
        "rect",
        {
          x: x + Math.min(1, bw * 0.1),
          y: pad.t + ih - bh,
          width: Math.max(1, bw - Math.min(2, bw * 0.2)),
          height: Math.max(p.count ? 1 : 0, bh),
          class: "bar",
        },
        s("title", null, `${p.date}: ${p.count}`),
      );
    }),
    labelIndexes(points.length).map((i) =>
      s(
        "text",
        {
          x: pad.l + i * bw + bw / 2,
          y: H - 6,
          class: "axis",
          "text-anchor": i === 0 ? "start" : i === points.length - 1 ? "end" : "middle",
        },
        shortDate(points[i]?.date ?? ""),
      ),
    ),
  );
  return h("figure", { class: "chart-wrap" }, svg as unknown as HTMLElement);
}

function niceCeil(n: number): number {
  if (n <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

function labelIndexes(n: number): number[] {
  if (n <= 1) return n ? [0] : [];
  const k = Math.min(6, n);
  const out = new Set<number>();
  for (let i = 0; i < k; i++) out.add(Math.round((i * (n - 1)) / (k - 1)));
  return [...out];
}

function shortDate(d: string): string {
  const t = Date.parse(`${d.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(t)) return d;
  return new Date(t).toLocaleDateString(undefined, { month: "short", day: "numeric", timeZone: "UTC" });
}

/** Horizontal bars for a `{name: count}` breakdown, largest first. */
export function breakdown(
  title: string,
  data: Record<string, number> | Array<{ name: string; count: number }> | null | undefined,
  opts: { href?: (name: string) => string; colorClass?: (name: string) => string; limit?: number } = {},
): HTMLElement {
  const rows = normalize(data)
    .sort((a, b) => b.count - a.count)
    .slice(0, opts.limit ?? 8);
  const max = Math.max(1, ...rows.map((r) => r.count));
  return h(
    "section",
    { class: "panel breakdown", "aria-label": title },
    h("h3", null, title),
    rows.length === 0
      ? h("p", { class: "muted" }, "No data yet.")
      : h(
          "ul",
          { class: "bars" },
          rows.map((r) => {
            const name = opts.href ? h("a", { href: opts.href(r.name) }, r.name) : h("span", null, r.name);
            return h(
              "li",
              null,
              h("span", { class: "bar-label", title: r.name }, name),
              h(
                "span",
                { class: "bar-track", "aria-hidden": "true" },
                h("span", {
                  class: `bar-fill ${opts.colorClass?.(r.name) ?? ""}`,
                  style: `width:${Math.max(2, (r.count / max) * 100)}%`,
                }),
              ),
              h("span", { class: "bar-value" }, r.count.toLocaleString()),
            );
          }),
        ),
  );
}

export function normalize(
  data:
    | Record<string, number>
    | Array<{ name?: string; count: number; [k: string]: unknown }>
    | null
    | undefined,
): Array<{ name: string; count: number }> {
  if (!data) return [];
  if (Array.isArray(data))
    return data.map((d) => ({
      name: String(d.name ?? d.key ?? d.type ?? d.finding_type ?? d.value ?? "?"),
      count: Number(d.count ?? 0),
    }));
  return Object.entries(data).map(([name, count]) => ({ name, count: Number(count) }));
}

const SEV_ORDER = ["critical", "high", "warning", "info"];

/** A stacked bar of severities (for sessions and the severity card). */
export function severityStack(counts: Record<string, number> | null | undefined): HTMLElement {
  const c = counts ?? {};
  const total = SEV_ORDER.reduce((a, k) => a + (c[k] ?? 0), 0);
  const text = SEV_ORDER.filter((k) => c[k])
    .map((k) => `${c[k]} ${k}`)
    .join(", ");
  return h(
    "span",
    { class: "sev-stack", role: "img", "aria-label": text || "no findings", title: text || "no findings" },
    total === 0
      ? h("span", { class: "sev-none" })
      : SEV_ORDER.filter((k) => c[k]).map((k) =>
          h("span", { class: `sev-seg sev-${k}`, style: `flex-grow:${c[k]}` }),
        ),
  );
}
