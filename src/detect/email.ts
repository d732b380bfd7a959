/**
 * The `email_address` validator: an address the rule's pattern found is a person's when it is not a
 * placeholder of documentation and tests, a mailbox of a role rather than a person, or a machine
 * account. The lists are data; each entry is a whole label or local part, never a substring.
 */

/** Domain labels that documentation and tests write instead of a real domain (`user@my-domain.com`). */
const PLACEHOLDER_LABEL =
  /^(?:(?:your|my|some|any|other|strange|email)-?)?(?:example|examples|domain|domains|hostname|host|server|website|site|company|email|mail-?server|test|testing|invalid|localhost|foo|bar|baz)(?:-?(?:one|two|\d|with-hyphens|name))?$/;

/** Top-level labels that are no real top-level domain: reserved ones and the placeholder `tld`. */
const PLACEHOLDER_TLD = new Set(["example", "test", "invalid", "localhost", "local", "tld", "lcl"]);

/**
 * Local parts that stand for "someone" in documentation (`user@`, `first.last@`), and mailboxes of a
 * role that are published to be written to (`security@`, `support@`, RFC 2142's `postmaster@`).
 */
const NOT_A_PERSON_LOCAL =
  /^(?:user|username|user\.name|someone|somebody|name|firstname\.lastname|first\.last|foo|bar|test|tester|email|e-mail|mail|sender|recipient|receiver|from|to|abuse|postmaster|hostmaster|webmaster|security|support|help|info|contact|hello|sales|billing|privacy|legal|press|noc|admin|root|nobody|opensource|conduct|opencode|feedback)$/i;

/** Domains of machine accounts (cloud service accounts, bots), not of a person. */
const MACHINE_DOMAINS =
  /(?:^|\.)(?:gserviceaccount\.com|iam\.gserviceaccount\.com|users\.noreply\.github\.com)$/;

/** Keys of the middle row of a keyboard: a run of only these is a key mash (`asdf@lkjsdf.com`). */
const HOME_ROW = /^[asdfghjkl]{4,}$/;

/** email_address: a person's address, not a placeholder, role mailbox or machine account. */
export function emailAddress(value: string): boolean {
  const at = value.lastIndexOf("@");
  if (at < 1) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  const labels = domain.split(".");
  if (PLACEHOLDER_TLD.has(labels.at(-1)!)) return false;
  // Every label but the top-level one: `example` in mail.example.org, `test` in test.te-st.com.
  if (labels.slice(0, -1).some((l) => PLACEHOLDER_LABEL.test(l))) return false;
  // a@b.com, a@b.c.dd, a@0b.cc: one-letter names of documentation and validator tests
  if (labels.slice(0, -1).every((l) => l.length <= 2) && (local.length <= 2 || labels[0]!.length === 1))
    return false;
  if (MACHINE_DOMAINS.test(domain)) return false;
  if (/\.(?:com|net|org|io)$/i.test(local)) return false; // trusted.com@evil.com: a host, not a mailbox
  const plain = local.split("+")[0]!;
  if (NOT_A_PERSON_LOCAL.test(plain) || NOT_A_PERSON_LOCAL.test(local.split("+").at(-1)!)) return false;
  if (/^(.)\1+$/.test(plain)) return false; // aaaa@
  if (local.startsWith("$") || /[{}<>]/.test(local)) return false; // $USER@, {name}@
  if (HOME_ROW.test(plain.toLowerCase()) && HOME_ROW.test(labels.at(-2)!)) return false;
  return true;
}
