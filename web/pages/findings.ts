/**
 * Findings: every filter of `/api/v1/findings`, sorting, paging, a detail view, CSV/JSON export of
 * the current filter, and one-click allowlisting of a value pattern or disabling of the rule.
 */
import { downloadUrl, get, post, put } from "../api.ts";
import { ago, badge, connectHint, empty, field, h, mount, num, select, shortPreview, when } from "../dom.ts";
import { confirmDialog, fail, toast } from "../feedback.ts";
import { onLive } from "../live.ts";
import { type PageCtx, proxyUrl, replaceParams } from "../state.ts";
import { ACTIONS, DETECTORS, type Finding, type List, PROVIDERS, SEVERITIES } from "../types.ts";

const FILTERS = [
  "severity",
  "detector",
  "action",
  "finding_type",
  "provider",
  "client",
  "rule",
  "session_id",
  "account_id",
  "days",
  "q",
] as const;
type FilterKey = (typeof FILTERS)[number];
const PAGE_SIZES = [25, 50, 100, 200];
/** How many findings a non-default sort covers (the API's largest page). */
const SORT_WINDOW = 500;

type SortKey = "ts" | "severity" | "finding_type" | "rule" | "action" | "provider" | "client" | "seen_count";
const SEV_RANK: Record<string, number> = { critical: 4, high: 3, warning: 2, info: 1 };

/** The masked preview as a glob: `AKIA****MPLE` → `AKIA*MPLE`. */
export function previewToPattern(preview: string): string {
  return preview.replace(/\*{2,}|…/g, "*");
}

export async function findingsPage(ctx: PageCtx) {
  const filter: Record<FilterKey, string> = Object.fromEntries(
    FILTERS.map((k) => [k, ctx.params.get(k) ?? ""]),
  ) as Record<FilterKey, string>;
  let limit = Number(ctx.params.get("limit")) || 50;
  let offset = Number(ctx.params.get("offset")) || 0;
  let sort: SortKey = (ctx.params.get("sort") as SortKey) || "ts";
  let dir: "asc" | "desc" = ctx.params.get("dir") === "asc" ? "asc" : "desc";
  let rows: Finding[] = [];
  let total = 0;
  let selectedId: number | null = ctx.rest[0] ? Number(ctx.rest[0]) : null;

  const tableBox = h("div");
  const detailBox = h("aside", {
    class: "panel detail",
    id: "finding-detail",
    "aria-label": "Finding detail",
  });
  const pager = h("div", { class: "pager" });
  const exportCsv = h("a", { class: "btn", id: "export-csv", download: "sluice-findings.csv" }, "Export CSV");
  const exportJson = h(
    "a",
    { class: "btn", id: "export-json", download: "sluice-findings.json" },
    "Export JSON",
  );
  const totalLabel = h("span", { class: "muted", id: "findings-total" });
  const sortNote = h("span", { class: "muted", id: "sort-note" });

  const query = () => {
    const q: Record<string, string | number> = {};
    for (const k of FILTERS) if (filter[k]) q[k] = filter[k];
    return q;
  };

  const syncUrl = () => {
    replaceParams(selectedId ? `findings/${selectedId}` : "findings", {
      ...query(),
      limit: limit === 50 ? null : limit,
      offset: offset || null,
      sort: sort === "ts" ? null : sort,
      dir: dir === "desc" ? null : dir,
    });
    exportCsv.href = downloadUrl("/findings/export", { ...query(), format: "csv" });
    exportJson.href = downloadUrl("/findings/export", { ...query(), format: "json" });
  };

  /** Newest-first is the server's order; any other sort fetches the newest SORT_WINDOW and pages here. */
  const clientSorted = () => !(sort === "ts" && dir === "desc");
  const load = async () => {
    syncUrl();
    try {
      const res = clientSorted()
        ? await get<List & { findings: Finding[] }>("/findings", {
            ...query(),
            limit: SORT_WINDOW,
            offset: 0,
          })
        : await get<List & { findings: Finding[] }>("/findings", { ...query(), limit, offset });
      if (ctx.left()) return;
      rows = res.findings;
      total = res.total;
      renderTable();
    } catch (err) {
      fail(err);
    }
  };

  const controls = FILTERS.map((k) => {
    const opts = (list: string[]) => [
      ["", "any"] as [string, string],
      ...list.map((v) => [v, v] as [string, string]),
    ];
    let el: HTMLSelectElement | HTMLInputElement;
    switch (k) {
      case "severity":
        el = select(k, opts(SEVERITIES), filter[k]);
        break;
      case "detector":
        el = select(k, opts(DETECTORS), filter[k]);
        break;
      case "action":
        el = select(k, opts(ACTIONS), filter[k]);
        break;
      case "provider":
        el = select(k, opts(PROVIDERS), filter[k]);
        break;
      case "days":
        el = select(
          k,
          [
            ["", "all time"],
            ["1", "today"],
            ["7", "7 days"],
            ["30", "30 days"],
            ["90", "90 days"],
          ],
          filter[k],
        );
        break;
      default:
        el = h("input", {
          type: k === "q" ? "search" : "text",
          name: k,
          value: filter[k],
          placeholder: k === "q" ? "type, rule or path" : "",
        });
    }
    el.id = `filter-${k}`;
    el.addEventListener("change", () => {
      filter[k] = el.value.trim();
      offset = 0;
      void load();
    });
    const labels: Record<FilterKey, string> = {
      severity: "Severity",
      detector: "Detector",
      action: "Action",
      finding_type: "Finding type",
      provider: "Provider",
      client: "Client",
      rule: "Rule",
      session_id: "Session",
      account_id: "Account",
      days: "Period",
      q: "Search",
    };
    return field(labels[k], el);
  });

  const clear = h(
    "button",
    {
      class: "btn",
      type: "button",
      onclick: () => {
        for (const k of FILTERS) filter[k] = "";
        for (const c of controls) {
          const el = c.querySelector("select, input") as HTMLInputElement;
          el.value = "";
        }
        offset = 0;
        void load();
      },
    },
    "Clear filters",
  );

  const sorted = () => {
    const k = sort;
    const m = dir === "asc" ? 1 : -1;
    return [...rows].sort((a, b) => {
      const va = k === "severity" ? (SEV_RANK[a.severity] ?? 0) : (a[k] as string | number);
      const vb = k === "severity" ? (SEV_RANK[b.severity] ?? 0) : (b[k] as string | number);
      return (va > vb ? 1 : va < vb ? -1 : 0) * m;
    });
  };

  const th = (label: string, key: SortKey, cls?: string) =>
    h(
      "th",
      {
        class: cls,
        "aria-sort": sort === key ? (dir === "asc" ? "ascending" : "descending") : "none",
        scope: "col",
      },
      h(
        "button",
        {
          class: "sort",
          type: "button",
          onclick: () => {
            if (sort === key) dir = dir === "asc" ? "desc" : "asc";
            else {
              sort = key;
              dir = key === "ts" || key === "severity" || key === "seen_count" ? "desc" : "asc";
            }
            offset = 0;
            void load();
          },
        },
        label,
        sort === key ? (dir === "asc" ? " ▲" : " ▼") : "",
      ),
    );

  const renderTable = () => {
    totalLabel.textContent = `${num(total)} findings`;
    sortNote.textContent =
      clientSorted() && total > SORT_WINDOW
        ? `Sorted within the ${SORT_WINDOW} newest matching findings.`
        : "";
    if (rows.length === 0) {
      const filtered = Object.values(filter).some(Boolean);
      mount(
        tableBox,
        h(
          "div",
          { class: "panel" },
          filtered
            ? empty("No finding matches this filter.", h("p", null, "Clear a filter or widen the period."))
            : empty("No findings yet", connectHint(proxyUrl())),
        ),
      );
    } else {
      mount(
        tableBox,
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { id: "findings-table" },
            h("caption", { class: "sr-only" }, "Findings. Activate a column header to sort by it."),
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                th("When", "ts"),
                th("Severity", "severity"),
                th("Type", "finding_type"),
                th("Rule", "rule"),
                h("th", { scope: "col" }, "Preview"),
                th("Action", "action"),
                th("Provider", "provider"),
                th("Client", "client"),
                th("Seen", "seen_count", "num"),
              ),
            ),
            h(
              "tbody",
              null,
              (clientSorted() ? sorted().slice(offset, offset + limit) : rows).map((f) =>
                h(
                  "tr",
                  {
                    class: `clickable${f.id === selectedId ? " selected" : ""}`,
                    tabindex: "0",
                    dataset: { id: String(f.id) },
                    "aria-label": `${f.severity} ${f.finding_type} ${f.preview}, open details`,
                    onclick: () => void openDetail(f.id),
                    onkeydown: (e: Event) => {
                      const k = (e as KeyboardEvent).key;
                      if (k === "Enter" || k === " ") {
                        e.preventDefault();
                        void openDetail(f.id);
                      }
                    },
                  },
                  h("td", { title: when(f.ts) }, ago(f.ts)),
                  h("td", null, badge(f.severity)),
                  h("td", null, f.finding_type),
                  h("td", { class: "mono" }, f.rule),
                  h("td", null, h("code", { title: f.preview }, shortPreview(f.preview))),
                  h("td", null, badge(f.action)),
                  h("td", null, f.provider),
                  h("td", null, f.client),
                  h("td", { class: "num" }, num(f.seen_count)),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const pages = Math.max(1, Math.ceil(total / limit));
    const page = Math.floor(offset / limit) + 1;
    mount(
      pager,
      field(
        "Rows per page",
        select("limit", PAGE_SIZES.map(String), String(limit), {
          id: "page-size",
          onchange: (e: Event) => {
            limit = Number((e.target as HTMLSelectElement).value);
            offset = 0;
            void load();
          },
        }),
      ),
      h("span", { class: "muted" }, `Page ${page} of ${pages}`),
      h(
        "button",
        {
          class: "btn",
          type: "button",
          disabled: offset === 0,
          onclick: () => {
            offset = Math.max(0, offset - limit);
            void load();
          },
        },
        "← Previous",
      ),
      h(
        "button",
        {
          class: "btn",
          type: "button",
          disabled: offset + limit >= total,
          onclick: () => {
            offset += limit;
            void load();
          },
        },
        "Next →",
      ),
    );
  };

  const openDetail = async (id: number) => {
    selectedId = id;
    syncUrl();
    for (const tr of tableBox.querySelectorAll("tr[data-id]"))
      tr.classList.toggle("selected", (tr as HTMLElement).dataset.id === String(id));
    try {
      const f = await get<Finding>(`/findings/${id}`);
      if (ctx.left()) return;
      renderDetail(f);
      showDetail(true);
    } catch (err) {
      fail(err);
    }
  };

  const hashKv = (k: string, v: string | null) => [
    h("dt", null, k),
    h("dd", null, v ? h("code", { title: v }, `${v.slice(0, 16)}…`) : "—"),
  ];
  const renderDetail = (f: Finding) => {
    const system = f.transport === "system" || !f.preview || !f.rule;
    const pattern = previewToPattern(f.preview);
    const listType = f.detector === "pii" ? "pii" : "secrets";
    const kv = (k: string, v: unknown) => [
      h("dt", null, k),
      h("dd", null, v === null || v === undefined || v === "" ? "—" : String(v)),
    ];
    mount(
      detailBox,
      h(
        "div",
        { class: "row", style: "justify-content:space-between" },
        h("h2", null, `Finding #${f.id}`),
        h(
          "button",
          {
            class: "btn small ghost",
            type: "button",
            "aria-label": "Close detail",
            onclick: () => {
              selectedId = null;
              detailBox.replaceChildren();
              showDetail(false);
              syncUrl();
              for (const tr of tableBox.querySelectorAll("tr.selected")) tr.classList.remove("selected");
            },
          },
          "Close",
        ),
      ),
      h("p", null, badge(f.severity), " ", badge(f.action), " ", h("strong", null, f.finding_type)),
      h("p", null, h("code", { id: "detail-preview" }, f.preview || "— (no matched value)")),
      f.description ? h("p", { class: "muted" }, f.description) : null,
      h(
        "dl",
        { class: "kv" },
        kv("Rule", f.rule),
        kv("Detector", f.detector),
        kv("Location", f.path),
        kv("Offsets", `${f.start}–${f.end}`),
        kv("Decoded from", f.decoded),
        kv("Seen", `${f.seen_count} request${f.seen_count === 1 ? "" : "s"}`),
        kv("First seen", when(f.ts)),
        kv("Last seen", when(f.last_seen)),
        kv("Provider", f.provider),
        kv("Model", f.model),
        kv("Client", f.client_name || f.client),
        kv("Request", f.request_id),
        kv("Transport", f.transport),
      ),
      h("h3", null, "Session context"),
      h(
        "dl",
        { class: "kv" },
        [
          h("dt", null, "Session"),
          h(
            "dd",
            null,
            h("a", { href: `#/sessions/${encodeURIComponent(f.session_id)}`, class: "mono" }, f.session_id),
          ),
        ],
        kv("Account", f.account_id),
        kv("Device", f.device_id),
        kv("Source IP", f.source_ip),
        kv("Working directory", f.working_directory),
        kv("Git branch", f.git_branch),
        kv("OS", f.os_platform),
        hashKv("Content hash", f.content_hash),
        hashKv("Value hash", f.value_hash),
      ),
      h("h3", null, "Tune"),
      system
        ? h(
            "p",
            { class: "muted" },
            "A system event (mode change or scan error): there is no value or rule to tune.",
          )
        : null,
      h(
        "div",
        { class: "row", hidden: system },
        h(
          "button",
          {
            class: "btn",
            type: "button",
            id: "allowlist-value",
            onclick: async () => {
              let note = "";
              try {
                const t = await post<{ match_count: number }>("/allowlists/test", { pattern });
                note = ` It matches ${t.match_count} recent finding${t.match_count === 1 ? "" : "s"}.`;
              } catch {
                /* the test is informative only */
              }
              const ok = await confirmDialog(
                "Allowlist this value pattern?",
                `Values matching ${pattern} will no longer be reported as ${listType}.${note}`,
                "Add to allowlist",
              );
              if (!ok) return;
              try {
                await post("/allowlists", { type: listType, pattern });
                toast(`Allowlisted ${pattern} (${listType}).`);
              } catch (err) {
                fail(err);
              }
            },
          },
          `Allowlist ${pattern}`,
        ),
        h(
          "button",
          {
            class: "btn danger",
            type: "button",
            id: "disable-rule",
            onclick: async () => {
              const ok = await confirmDialog(
                `Disable rule ${f.rule}?`,
                "The rule stops matching on the next request. You can enable it again on the Rules page.",
                "Disable rule",
                true,
              );
              if (!ok) return;
              try {
                await put(`/rules/${encodeURIComponent(f.rule)}`, { enabled: false });
                toast(`Rule ${f.rule} disabled.`);
              } catch (err) {
                fail(err);
              }
            },
          },
          "Disable rule",
        ),
        h("a", { class: "btn", href: `#/rules?q=${encodeURIComponent(f.rule)}` }, "Open rule"),
      ),
    );
  };

  const split = h("div", { class: "grid" }, h("div", null, tableBox, pager), detailBox);
  const showDetail = (on: boolean) => {
    split.className = on ? "grid table-detail" : "grid one-col";
    detailBox.hidden = !on;
  };
  showDetail(false);

  mount(
    ctx.root,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Findings"),
      totalLabel,
      sortNote,
      h("span", { class: "spacer" }),
      exportCsv,
      exportJson,
    ),
    h(
      "form",
      {
        class: "filters",
        role: "search",
        "aria-label": "Filter findings",
        onsubmit: (e: Event) => e.preventDefault(),
      },
      controls,
      clear,
    ),
    split,
  );

  // New findings that match no narrowing filter refresh the first page.
  let pending = false;
  ctx.onLeave(
    onLive("finding", () => {
      if (offset !== 0 || pending) return;
      pending = true;
      setTimeout(() => {
        pending = false;
        if (!ctx.left()) void load();
      }, 300);
    }),
  );

  await load();
  if (selectedId) await openDetail(selectedId);
}
