/** The Audit page's application log: its tail, polled while "Follow live" is on, and the full download. */
import { get } from "../api.ts";
import { h } from "../dom.ts";
import { fail } from "../feedback.ts";
import type { PageCtx } from "../state.ts";

const LOG_POLL_MS = 2000;

export function logPanel(ctx: PageCtx) {
  const logPre = h("pre", {
    class: "log-tail",
    id: "log-tail",
    tabindex: "0",
    "aria-label": "Application log, most recent last",
  });
  const follow = h("input", { type: "checkbox", id: "log-follow", checked: true });
  let timer: ReturnType<typeof setInterval> | undefined;
  const load = async () => {
    try {
      const res = await get<{ lines: string[] }>("/logs/tail");
      if (ctx.left()) return;
      const atBottom = logPre.scrollTop + logPre.clientHeight >= logPre.scrollHeight - 8;
      logPre.textContent = res.lines.length
        ? res.lines.join("\n")
        : "(the log is empty at the current level)";
      if (atBottom || follow.checked) logPre.scrollTop = logPre.scrollHeight;
    } catch (err) {
      if (timer) clearInterval(timer);
      fail(err);
    }
  };
  /** Poll while "Follow live" is checked. */
  const setFollow = () => {
    if (timer) clearInterval(timer);
    timer = follow.checked ? setInterval(() => void load(), LOG_POLL_MS) : undefined;
  };
  follow.addEventListener("change", setFollow);
  ctx.onLeave(() => timer && clearInterval(timer));
  const element = h(
    "section",
    { class: "panel", style: "margin-top:14px", "aria-labelledby": "log-title" },
    h(
      "div",
      { class: "row", style: "justify-content:space-between" },
      h("h2", { id: "log-title" }, "Application log"),
      h(
        "div",
        { class: "row" },
        h("label", { class: "row", for: "log-follow", style: "gap:6px" }, follow, "Follow live"),
        h("a", { class: "btn", href: "/api/v1/logs/download", download: "sluice.log" }, "Download full log"),
      ),
    ),
    logPre,
  );
  return { element, load, follow: setFollow };
}
