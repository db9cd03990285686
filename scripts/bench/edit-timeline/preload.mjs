// Preload for the built server (node --import), used for docs/PERFORMANCE.md "Journaled /e: where the time goes":
// per /e request, when each durable step starts and ends relative to the request's start (diagnostics_channel),
// and the time inside SQLite statements. Medians are written to MARKS_OUT on SIGTERM. Diagnostics only.
import dc from "node:diagnostics_channel";
import fs from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");
let cur;
const done = [];
const now = () => performance.now();
const mark = (name) => {
  if (cur) (cur.marks[name] ??= []).push(now() - cur.t0);
};
dc.subscribe("http.server.request.start", ({ request }) => {
  if (!/\/e\?/.test(request.url)) {
    cur = undefined;
    return;
  }
  cur = { t0: now(), cpu0: process.cpuUsage(), marks: {}, sql: 0, sqlN: 0 };
});
dc.subscribe("http.server.response.finish", () => {
  if (!cur) return;
  const c = process.cpuUsage(cur.cpu0);
  cur.total = now() - cur.t0;
  cur.cpu = (c.user + c.system) / 1000;
  done.push(cur);
  cur = undefined;
});
const origFsync = fs.fsync;
fs.fsync = function (fd, cb) {
  const r = cur;
  const start = r ? now() - r.t0 : 0;
  let kind = "fsync";
  try {
    const l = fs.readlinkSync(`/proc/self/fd/${fd}`);
    kind = l.endsWith("-wal") ? "WAL fsync" : l.includes("urlbridge-tmp") ? "temp fsync" : "dir fsync";
  } catch {
    // not a path we can name: counted as a plain fsync
  }
  return origFsync.call(fs, fd, (...a) => {
    if (r) {
      (r.marks[`${kind} start`] ??= []).push(start);
      (r.marks[`${kind} callback`] ??= []).push(now() - r.t0);
    }
    cb(...a);
  });
};
import http from "node:http";
const origEnd = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (...a) {
  mark("res.end");
  return origEnd.apply(this, a);
};
const origRename = fs.renameSync;
fs.renameSync = function (...a) {
  mark("rename");
  return origRename.apply(fs, a);
};
const origOpen = fs.openSync;
fs.openSync = function (p, ...a) {
  const temp = String(p).includes("urlbridge-tmp");
  if (temp) mark("temp create");
  try {
    return origOpen.call(fs, p, ...a);
  } finally {
    if (temp) mark("temp created");
  }
};
const S = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1"));
for (const m of ["run", "get", "all"]) {
  const o = S[m];
  S[m] = function (...a) {
    const s = now();
    try {
      return o.apply(this, a);
    } finally {
      if (cur) {
        cur.sql += now() - s;
        cur.sqlN++;
        (cur.stmts ??= []).push(`${(now() - cur.t0).toFixed(2)} ${(now() - s).toFixed(3)} ${this.source.slice(0, 60)}`);
      }
    }
  };
}
const D = Database.prototype;
const oe = D.exec;
D.exec = function (...a) {
  const s = now();
  try {
    return oe.apply(this, a);
  } finally {
    if (cur) {
      cur.sql += now() - s;
      cur.sqlN++;
    }
  }
};
process.on("SIGTERM", () => {
  const rows = done.slice(60);
  const med = (v) => {
    const s = [...v].sort((a, b) => a - b);
    return s[Math.floor(s.length / 2)];
  };
  const out = {
    n: rows.length,
    total: med(rows.map((r) => r.total)),
    cpu: med(rows.map((r) => r.cpu)),
    sql: med(rows.map((r) => r.sql)),
    sqlN: med(rows.map((r) => r.sqlN)),
    marks: {},
  };
  const names = new Set(rows.flatMap((r) => Object.keys(r.marks)));
  for (const n of names) {
    const v = rows.filter((r) => r.marks[n]).map((r) => r.marks[n]);
    const k = Math.max(...v.map((x) => x.length));
    for (let i = 0; i < k; i++) {
      const w = v.filter((x) => x[i] !== undefined).map((x) => x[i]);
      if (w.length > rows.length / 2) out.marks[`${n}${k > 1 ? ` #${i + 1}` : ""}`] = med(w);
    }
  }
  out.sample = rows[rows.length >> 1].stmts;
  fs.writeFileSync(process.env.MARKS_OUT, JSON.stringify(out, null, 1));
  process.exit(0);
});
