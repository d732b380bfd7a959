/** Sign-in form, shown when `dashboard.password` is set and there is no session. */
import { h, mount } from "../dom.ts";

export function loginPage(
  root: HTMLElement,
  message: string | null,
  submit: (password: string) => Promise<void>,
) {
  const pw = h("input", {
    type: "password",
    id: "login-password",
    name: "password",
    autocomplete: "current-password",
    required: true,
  });
  const msg = h("p", { class: "msg", role: "alert", id: "login-message" }, message ?? "");
  const btn = h("button", { class: "btn primary", type: "submit" }, "Sign in");
  const form = h(
    "form",
    {
      class: "panel login",
      "aria-labelledby": "login-title",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        btn.disabled = true;
        msg.textContent = "";
        try {
          await submit(pw.value);
        } catch (err) {
          msg.textContent = (err as Error).message || "Sign-in failed.";
          pw.select();
        } finally {
          btn.disabled = false;
        }
      },
    },
    h("h1", { id: "login-title" }, "Sign in to sluice"),
    h(
      "p",
      { class: "muted" },
      "This dashboard is protected by a password (dashboard.password or SLUICE_DASHBOARD_PASSWORD).",
    ),
    h("div", { class: "field" }, h("label", { for: "login-password" }, "Password"), pw),
    msg,
    h("div", { class: "row end" }, btn),
  );
  mount(root, form);
  pw.focus();
}
