/** The Pipeline page's proxy mode: active or passthrough, switched after a confirmation, followed live. */
import { put } from "../api.ts";
import { h, mount } from "../dom.ts";
import { confirmDialog, fail, toast } from "../feedback.ts";
import { onLive } from "../live.ts";
import { type PageCtx, refreshStatus } from "../state.ts";

type Mode = "active" | "passthrough";

export function modePanel(ctx: PageCtx, mode: Mode): HTMLElement {
  const box = h("section", { class: "panel", "aria-labelledby": "mode-title", id: "mode-panel" });
  const render = (mode: Mode) => {
    const next = mode === "active" ? "passthrough" : "active";
    mount(
      box,
      h("h2", { id: "mode-title" }, "Proxy mode"),
      h(
        "p",
        null,
        "Current mode: ",
        h("strong", { id: "mode-value" }, mode),
        mode === "active" ? " — every request is scanned." : " — requests are forwarded without scanning.",
      ),
      h(
        "button",
        {
          class: `btn ${next === "passthrough" ? "danger" : "primary"}`,
          type: "button",
          id: "mode-toggle",
          onclick: () => switchMode(next, render),
        },
        next === "passthrough" ? "Switch to passthrough…" : "Switch to active…",
      ),
    );
  };
  render(mode);
  ctx.onLeave(onLive("mode-changed", (ev) => render(ev.mode === "passthrough" ? "passthrough" : "active")));
  return box;
}

/** Ask, switch to `next`, and draw the mode the proxy reports. */
async function switchMode(next: Mode, render: (mode: Mode) => void) {
  const off = next === "passthrough";
  const ok = await confirmDialog(
    off ? "Switch to passthrough?" : "Turn scanning back on?",
    off
      ? "Requests will be forwarded without scanning: secrets and personal data are neither detected nor blocked until you switch back. The change is recorded as a mode_changed finding."
      : "Every request will be scanned again.",
    off ? "Switch to passthrough" : "Switch to active",
    off,
  );
  if (!ok) return;
  try {
    await put("/config", { "proxy.mode": next });
    const s = await refreshStatus();
    render(s.mode);
    toast(`Proxy mode: ${s.mode}.`);
  } catch (err) {
    fail(err);
  }
}
