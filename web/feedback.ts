/** Toasts (an aria-live region) and a modal confirmation built on <dialog>. */
import { h } from "./dom.ts";

export function toast(message: string, kind: "ok" | "error" | "info" = "ok") {
  const box = document.getElementById("toasts");
  if (!box) return;
  const el = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  box.appendChild(el);
  setTimeout(() => el.remove(), kind === "error" ? 8000 : 3500);
}

/** Report an error from an API call in a toast. */
export function fail(err: unknown) {
  toast(err instanceof Error ? err.message : String(err), "error");
}

/** Run `fn`; what it throws is shown in a toast. */
export async function attempt(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    fail(err);
  }
}

/** A modal yes/no question. Resolves true when confirmed. Escape or Cancel resolves false. */
export function confirmDialog(
  title: string,
  body: string,
  confirmLabel: string,
  danger = false,
): Promise<boolean> {
  return new Promise((resolve) => {
    const ok = h(
      "button",
      { class: `btn ${danger ? "danger" : "primary"}`, value: "ok", type: "submit" },
      confirmLabel,
    );
    const dlg = h(
      "dialog",
      { class: "dialog", "aria-labelledby": "dlg-title" },
      h(
        "form",
        { method: "dialog" },
        h("h2", { id: "dlg-title" }, title),
        h("p", null, body),
        h(
          "div",
          { class: "row end" },
          h("button", { class: "btn", value: "cancel", type: "submit" }, "Cancel"),
          ok,
        ),
      ),
    );
    dlg.addEventListener("close", () => {
      resolve(dlg.returnValue === "ok");
      dlg.remove();
    });
    document.body.appendChild(dlg);
    dlg.showModal();
    ok.focus();
  });
}

/** Copy text; falls back to a selected textarea when the Clipboard API is unavailable. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = h("textarea", { "aria-hidden": "true", style: "position:fixed;left:-9999px" });
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    return ok;
  }
}
