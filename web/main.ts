/**
 * The dashboard shell: sign-in, hash routing (`#/findings?severity=high`), theme, mode pill and the
 * passthrough banner. Pages live in web/pages/, one file each.
 */
import { ApiError, api, get, onUnauthorized, post, setCsrfToken } from "./api.ts";
import { h, mount } from "./dom.ts";
import { fail } from "./feedback.ts";
import { onLive, onLiveState, startLive, stopLive } from "./live.ts";
import { allowlistsPage } from "./pages/allowlists.ts";
import { auditPage } from "./pages/audit.ts";
import { connectPage } from "./pages/connect.ts";
import { findingsPage } from "./pages/findings.ts";
import { loginPage } from "./pages/login.ts";
import { notificationsPage } from "./pages/notifications.ts";
import { overviewPage } from "./pages/overview.ts";
import { pipelinePage } from "./pages/pipeline.ts";
import { ruleAnalysisPage } from "./pages/rule-analysis.ts";
import { rulesPage } from "./pages/rules.ts";
import { sessionsPage } from "./pages/sessions.ts";
import { onStatus, type PageCtx, refreshStatus } from "./state.ts";
import type { AuthSession } from "./types.ts";

type Page = (ctx: PageCtx) => void | Promise<void>;

const PAGES: Array<{ id: string; title: string; render: Page }> = [
  { id: "", title: "Overview", render: overviewPage },
  { id: "findings", title: "Findings", render: findingsPage },
  { id: "sessions", title: "Sessions", render: sessionsPage },
  { id: "rules", title: "Rules", render: rulesPage },
  { id: "rule-analysis", title: "Rule analysis", render: ruleAnalysisPage },
  { id: "allowlists", title: "Allowlists", render: allowlistsPage },
  { id: "pipeline", title: "Pipeline & settings", render: pipelinePage },
  { id: "notifications", title: "Notifications", render: notificationsPage },
  { id: "audit", title: "Audit & logs", render: auditPage },
  { id: "connect", title: "Connect", render: connectPage },
];

// The page is served without response headers of ours (Bun serves the bundle), so refuse framing here.
if (window.top !== window.self) {
  document.body.textContent = "The sluice dashboard cannot be shown inside a frame.";
  throw new Error("framed");
}

const main = document.getElementById("main")!;
const nav = document.getElementById("nav")!;
const logoutBtn = document.getElementById("logout") as HTMLButtonElement;
let leaveFns: Array<() => void> = [];
let hasLeft = { v: false };
let auth: AuthSession = { authenticated: true, password_required: false, csrf_token: null };
let signedIn = false;

/* ---------- theme ---------- */
const THEMES = ["system", "light", "dark"] as const;
type Theme = (typeof THEMES)[number];
const themeBtn = document.getElementById("theme-toggle") as HTMLButtonElement;
function applyTheme(t: Theme) {
  if (t === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  themeBtn.textContent = `Theme: ${t}`;
  themeBtn.setAttribute("aria-label", `Colour theme: ${t}. Activate to change.`);
}
let theme: Theme = (localStorage.getItem("sluice-theme") as Theme | null) ?? "system";
if (!THEMES.includes(theme)) theme = "system";
applyTheme(theme);
themeBtn.addEventListener("click", () => {
  theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length]!;
  localStorage.setItem("sluice-theme", theme);
  applyTheme(theme);
});

/* ---------- navigation ---------- */
function renderNav(current: string) {
  mount(
    nav,
    PAGES.map((p) =>
      h("li", null, h("a", { href: `#/${p.id}`, "aria-current": p.id === current ? "page" : null }, p.title)),
    ),
  );
}

function parseHash(): { page: string; rest: string[]; params: URLSearchParams } {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path = "", query = ""] = raw.split("?", 2);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { page: parts[0] ?? "", rest: parts.slice(1), params: new URLSearchParams(query) };
}

function leave() {
  hasLeft.v = true;
  for (const fn of leaveFns) {
    try {
      fn();
    } catch {
      /* ignore */
    }
  }
  leaveFns = [];
}

async function route() {
  if (!signedIn) return;
  leave();
  const { page, rest, params } = parseHash();
  const def = PAGES.find((p) => p.id === page) ?? PAGES[0]!;
  renderNav(def.id);
  document.title = `${def.title} · sluice`;
  const marker = { v: false };
  hasLeft = marker;
  const ctx: PageCtx = {
    root: main,
    rest,
    params,
    onLeave: (fn) => leaveFns.push(fn),
    left: () => marker.v,
  };
  mount(main, h("p", { class: "muted" }, "Loading…"));
  try {
    await def.render(ctx);
  } catch (err) {
    if (marker.v) return;
    if (err instanceof ApiError && err.status === 401) return;
    mount(
      main,
      h(
        "div",
        { class: "panel" },
        h("h1", null, def.title),
        h("p", { role: "alert" }, err instanceof Error ? err.message : String(err)),
      ),
    );
  }
}

/* ---------- header: mode pill, passthrough banner, live state ---------- */
const modePill = document.getElementById("mode-pill")!;
const livePill = document.getElementById("live-pill")!;
const banner = document.getElementById("banner")!;
onStatus((st) => {
  modePill.textContent = st.mode === "passthrough" ? "Passthrough" : "Active: scanning";
  modePill.className = `pill ${st.mode === "passthrough" ? "warn" : "on"}`;
  if (st.mode === "passthrough") {
    mount(
      banner,
      h(
        "div",
        { class: "banner", id: "passthrough-banner" },
        h("strong", null, "Passthrough mode:"),
        " requests are forwarded without scanning. Nothing is detected, logged or blocked.",
        h("a", { href: "#/pipeline" }, "Turn scanning back on"),
      ),
    );
  } else banner.replaceChildren();
});
let wasLive = false;
onLiveState((up) => {
  wasLive ||= up;
  if (!signedIn) {
    livePill.textContent = "";
    return;
  }
  livePill.textContent = up ? "Live" : wasLive ? "Live: reconnecting" : "Live: connecting";
  livePill.className = `pill ${up ? "on" : "warn"}`;
  livePill.title = up ? "Receiving events from /api/v1/live" : "The live stream is disconnected";
});
onLive("mode-changed", () => void refreshStatus().catch(() => {}));
onLive("config-reloaded", () => void refreshStatus().catch(() => {}));

/* ---------- sign-in ---------- */
function showLogin(message: string | null) {
  signedIn = false;
  leave();
  stopLive();
  document.body.classList.add("signed-out");
  livePill.textContent = "";
  modePill.textContent = "";
  banner.replaceChildren();
  renderNav("");
  nav.replaceChildren();
  logoutBtn.hidden = true;
  document.title = "Sign in · sluice";
  loginPage(main, message, async (password) => {
    const res = await api<{ csrf_token: string }>("/auth/login", {
      method: "POST",
      body: { password },
      quiet401: true,
    });
    setCsrfToken(res.csrf_token);
    auth = { authenticated: true, password_required: true, csrf_token: res.csrf_token };
    await enter();
  });
}

onUnauthorized((message) => {
  if (signedIn) showLogin(message);
});

logoutBtn.addEventListener("click", async () => {
  try {
    await post("/auth/logout");
  } catch (err) {
    fail(err);
  }
  setCsrfToken(null);
  showLogin("You are signed out.");
});

async function enter() {
  signedIn = true;
  document.body.classList.remove("signed-out");
  logoutBtn.hidden = !auth.password_required;
  livePill.textContent = "Live: connecting";
  livePill.className = "pill warn";
  startLive();
  await refreshStatus().catch(() => {});
  await route();
}

async function boot() {
  try {
    auth = await get<AuthSession>("/auth/session");
  } catch (err) {
    mount(
      main,
      h(
        "div",
        { class: "panel" },
        h("h1", null, "sluice"),
        h("p", { role: "alert" }, (err as Error).message),
      ),
    );
    return;
  }
  setCsrfToken(auth.csrf_token);
  if (auth.password_required && !auth.authenticated) showLogin(null);
  else await enter();
}

window.addEventListener("hashchange", () => {
  main.focus({ preventScroll: true });
  void route();
});
void boot();
