// The explorer's time axis: ticks and labels for times in seconds since the
// Unix epoch (UTC). An array given --rate and --start on `momenta serve`'s
// command line has element i at start + i / rate; explorer.js maps the ticks
// to pixels. Steps are round in the clock's units (1-2-5 µs and ms, 1-2-5-10-15-30 s
// and min, 1-2-3-6-12 h, then days), and a label shows as much as its step
// needs: a date, hh:mm:ss, hh:mm:ss.mmm or hh:mm:ss.mmmuuu. Times are kept to
// the microsecond (a double holds about 0.2 µs near today).
"use strict";

window.momentaTime = (() => {
  const DAY = 86400;
  const STEPS = [];
  for (const per of [1e6, 1e3]) for (const m of [1, 2, 5, 10, 20, 50, 100, 200, 500]) STEPS.push(m / per);
  for (const m of [1, 2, 5, 10, 15, 30]) STEPS.push(m);
  for (const m of [1, 2, 5, 10, 15, 30]) STEPS.push(60 * m);
  for (const m of [1, 2, 3, 6, 12]) STEPS.push(3600 * m);
  for (let p = 1; p <= 1e6; p *= 10) for (const m of [1, 2, 5]) STEPS.push(DAY * p * m);

  // About `count` round times covering [t0, t1] (seconds); the array's `step` is their spacing.
  function ticks(t0, t1, count) {
    const span = t1 - t0;
    const out = [];
    if (!(span > 0) || !Number.isFinite(span)) { out.step = 1; return out; }
    const step = STEPS.find((s) => span / s <= count) || STEPS[STEPS.length - 1];
    for (let k = Math.ceil(t0 / step); k * step <= t1 && out.length < 1000; k++) out.push(k * step);
    out.step = step;
    return out;
  }

  // The UTC fields of time t, to the microsecond.
  function fields(t) {
    const us = Math.round(t * 1e6);
    const sec = Math.floor(us / 1e6);
    const d = new Date(sec * 1000);
    const two = (v) => String(v).padStart(2, "0");
    return {
      date: d.getUTCFullYear() + "-" + two(d.getUTCMonth() + 1) + "-" + two(d.getUTCDate()),
      clock: two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + ":" + two(d.getUTCSeconds()),
      micros: String(us - sec * 1e6).padStart(6, "0"),
    };
  }

  // A tick's label: as fine as `step` needs.
  function format(t, step) {
    const f = fields(t);
    if (step >= DAY) return f.date;
    if (step >= 1) return f.clock;
    if (step >= 1e-3) return f.clock + "." + f.micros.slice(0, 3);
    return f.clock + "." + f.micros;
  }

  // The whole instant, ISO-8601 UTC, the fraction without trailing zeros ("2026-01-02T03:04:05.5Z").
  function instant(t) {
    const f = fields(t);
    const frac = f.micros.replace(/0+$/, "");
    return f.date + "T" + f.clock + (frac ? "." + frac : "") + "Z";
  }

  return { ticks, format, instant };
})();
