/**
 * Throwaway TLS material for tests: a CA and a server certificate for 127.0.0.1 / localhost /
 * ::1, generated with `openssl` into a temp directory once per test process.
 *
 * @example
 * import { testTls } from "../helpers/tls.ts";
 * const tls = testTls();
 * Bun.serve({ port: 0, hostname: "127.0.0.1", tls: { cert: tls.cert, key: tls.key }, fetch });
 * // point sluice's `proxy.ca_bundle` at tls.caPath; for a direct fetch: fetch(url, { tls: { ca: tls.ca } })
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestTls {
  dir: string;
  /** Path to the CA certificate PEM (use as `proxy.ca_bundle`). */
  caPath: string;
  certPath: string;
  keyPath: string;
  /** PEM contents. */
  ca: string;
  cert: string;
  key: string;
}

let cached: TestTls | null = null;

function openssl(args: string[], cwd: string) {
  const r = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`);
}

/** The per-process CA and server certificate (generated on first call). */
export function testTls(): TestTls {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), "sluice-tls-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "2",
      "-subj",
      "/CN=sluice test CA",
    ],
    dir,
  );
  writeFileSync(
    join(dir, "ext.cnf"),
    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n",
  );
  openssl(
    ["req", "-new", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"],
    dir,
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.pem",
      "-days",
      "2",
      "-extfile",
      "ext.cnf",
    ],
    dir,
  );
  const caPath = join(dir, "ca.pem");
  const certPath = join(dir, "server.pem");
  const keyPath = join(dir, "server.key");
  cached = {
    dir,
    caPath,
    certPath,
    keyPath,
    ca: readFileSync(caPath, "utf8"),
    cert: readFileSync(certPath, "utf8"),
    key: readFileSync(keyPath, "utf8"),
  };
  return cached;
}
