// webagent's action helper. It lives in the same isolated world as the
// observer (extract.js), so it can reach the exact node an observation
// listed, and the page's scripts cannot see or patch it.
//
// Every entry point returns a plain object: {ok:true, ...} or
// {ok:false, reason, message}. The Rust executor turns `reason` into an
// ActionResult; nothing here throws across the boundary on purpose.
(() => {
  'use strict';
  if (globalThis.__webagentAct) return 'ready';

  const squeeze = (s) => String(s || '').replace(/\s+/g, ' ').trim();
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const fail = (reason, message) => ({ ok: false, reason, message });

  const composedParent = (node) => {
    if (node.parentElement) return node.parentElement;
    const root = node.parentNode;
    return root && root.host ? root.host : null;
  };

  // Whether `a` is `b` or an ancestor of it, across shadow roots and
  // same-origin frames.
  function contains(a, b) {
    for (let e = b; e; ) {
      if (e === a) return true;
      const up = composedParent(e);
      if (up) { e = up; continue; }
      const win = e.ownerDocument && e.ownerDocument.defaultView;
      e = win ? win.frameElement : null;
    }
    return false;
  }

  // How the model would recognise an element in a message.
  function describe(el) {
    if (!el || !el.localName) return 'an unknown element';
    let s = '<' + el.localName;
    if (el.id) s += ' id="' + clip(el.id, 40) + '"';
    const cls = typeof el.className === 'string' ? squeeze(el.className) : '';
    if (cls) s += ' class="' + clip(cls, 60) + '"';
    s += '>';
    const text = clip(squeeze(el.innerText || el.textContent || ''), 60);
    if (text) s += ' "' + text + '"';
    return s;
  }

  function frameOffset(f) {
    const r = f.getBoundingClientRect();
    const cs = getComputedStyle(f);
    return { x: r.left + f.clientLeft + parseFloat(cs.paddingLeft || '0'),
      y: r.top + f.clientTop + parseFloat(cs.paddingTop || '0') };
  }

  // Box in top-level viewport coordinates, and the visible part of it
  // (clipped by every frame's viewport on the way up).
  function topBox(el) {
    const r = el.getBoundingClientRect();
    let left = r.left, top = r.top, right = r.right, bottom = r.bottom;
    let vis = { left, top, right, bottom };
    let win = el.ownerDocument.defaultView;
    while (win) {
      vis = { left: Math.max(vis.left, 0), top: Math.max(vis.top, 0),
        right: Math.min(vis.right, win.innerWidth), bottom: Math.min(vis.bottom, win.innerHeight) };
      const f = win.frameElement;
      if (!f) break;
      const off = frameOffset(f);
      left += off.x; right += off.x; top += off.y; bottom += off.y;
      vis = { left: vis.left + off.x, right: vis.right + off.x, top: vis.top + off.y, bottom: vis.bottom + off.y };
      win = f.ownerDocument.defaultView;
    }
    return { left, top, right, bottom, vis };
  }

  // The topmost element at a top-level point, through open shadow roots and
  // same-origin frames.
  function deepHit(x, y) {
    let doc = document, ox = 0, oy = 0;
    for (let guard = 0; guard < 16; guard++) {
      let h = doc.elementFromPoint(x - ox, y - oy);
      while (h && h.shadowRoot) {
        const inner = h.shadowRoot.elementFromPoint(x - ox, y - oy);
        if (!inner || inner === h) break;
        h = inner;
      }
      if (!h || h.localName !== 'iframe') return h;
      let d = null;
      try { d = h.contentDocument; } catch (_) { d = null; }
      if (!d) return h;
      const off = frameOffset(h);
      ox += off.x; oy += off.y; doc = d;
    }
    return null;
  }

  const visible = (el) => {
    if (!el.isConnected) return false;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 && r.height <= 0) return false;
    return el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  };

  // ---- finding the target ----

  // Resolves {seq, index} through the observer (the exact listed node) or
  // {selector} to the first visible match in the top document.
  function find(target) {
    if (target.selector !== undefined) {
      const p = globalThis.__webagentObserver.pierce(target.selector);
      if (p.error === 'missing') return { ...fail('not_found', p.detail), retry: true };
      if (p.error) return fail('invalid_params', `the browser cannot read selector \`${target.selector}\`: ${p.detail}`);
      // The executor sends the rest of a selector into the frame itself.
      if (p.cross) return { ...fail('not_found', `\`${p.prefix}\` is a frame of another origin that was not entered`), retry: true };
      let matches;
      try { matches = Array.from(p.root.querySelectorAll(p.last)); }
      catch (e) { return fail('invalid_params', `the browser cannot read selector \`${target.selector}\`: ${e.message}`); }
      // It may still appear: the executor retries until its time limit.
      if (!matches.length) return { ...fail('not_found', `no element matches \`${target.selector}\``), retry: true };
      let used = matches.findIndex(visible);
      if (used < 0) used = 0;
      return { ok: true, el: matches[used], matched: matches.length, used, label: target.label || `\`${target.selector}\`` };
    }
    let el = null;
    // In a frame the index is the frame's own; the label is the listing's.
    const label = target.label || `element ${target.index}`;
    const reply = JSON.parse(globalThis.__webagentObserver.call(target.seq, target.index, (e) => { el = e; return null; }, null));
    if (!reply.ok) {
      if (reply.error === 'stale' && globalThis.__webagentObserver.sequence() === 0) {
        return fail('not_found', `${label} is gone: the page navigated or reloaded since it was listed; observe again`);
      }
      const tail = reply.error === 'stale' ? '; use the latest listing' : '; observe again to get fresh indices';
      return fail('not_found', `${label} cannot be used: ${reply.detail}${tail}`);
    }
    return { ok: true, el, label };
  }

  // ---- actionability ----

  const nextFrame = () => new Promise((resolve) => {
    let done = false;
    const finish = () => { if (!done) { done = true; resolve(); } };
    requestAnimationFrame(finish);
    // A background tab may not paint; never wait on it for long.
    setTimeout(finish, 50);
  });

  function disabledWhy(el) {
    if (el.matches && el.matches(':disabled')) return 'is disabled';
    for (let e = el; e; e = composedParent(e)) {
      if (e.getAttribute && e.getAttribute('aria-disabled') === 'true') return 'is marked aria-disabled';
      if (e.inert) return 'is inert';
    }
    return null;
  }

  const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number']);
  function editableKind(el) {
    if (el.isContentEditable) return 'contenteditable';
    if (el.localName === 'textarea') return 'text';
    if (el.localName === 'input') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (TEXT_TYPES.has(t)) return 'text';
      if (['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'].includes(t)) return 'value';
    }
    return null;
  }

  // Checks attached, visible, enabled (editable), scrolls into view, waits
  // for a stable box and hit-tests the click point. Returns the point in
  // top-level coordinates, or why the element cannot take the action now.
  // `retry` tells the executor whether waiting could help.
  async function prepare(found, opts) {
    const el = found.el;
    const label = found.label;
    if (!el.isConnected) return { ...fail('not_found', `${label} is no longer in the page; observe again`), retry: false };
    if (!visible(el)) return { ...fail('not_visible', `${label} (${describe(el)}) is hidden or has no size`), retry: true };
    if (opts.enabled) {
      const why = disabledWhy(el);
      if (why) return { ...fail('not_interactive', `${label} (${describe(el)}) ${why}`), retry: true };
    }
    if (opts.editable) {
      const kind = editableKind(el);
      // `keys`: a widget that is no field (a terminal reading keydown) is
      // typed into with key events once it takes focus.
      if (!kind && !opts.keys) return { ...fail('not_interactive', `${label} (${describe(el)}) is not a text field or contenteditable`), retry: false };
      if (kind && el.readOnly) return { ...fail('not_interactive', `${label} (${describe(el)}) is read-only`), retry: true };
    }
    let box = topBox(el);
    const vw = window.innerWidth, vh = window.innerHeight;
    const inside = box.left >= 0 && box.top >= 0 && box.right <= vw && box.bottom <= vh &&
      box.vis.right - box.vis.left >= 1 && box.vis.bottom - box.vis.top >= 1;
    if (!inside) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    }
    // Stable: the same box in this frame and the next one (layout is
    // synchronous, so the first reading already reflects the scroll).
    // A frame can be due right after this reading, so keep waiting until
    // at least ~10 ms have passed: a box that moves on timers shows it.
    const a = topBox(el);
    const t0 = performance.now();
    // A click checks stability itself: its mouse move waits for a frame,
    // and `confirm` compares the box after it.
    if (opts.deferStable) {
      box = a;
    } else {
      await nextFrame();
      if (performance.now() - t0 < 10) await nextFrame();
      box = topBox(el);
    }
    if (Math.abs(a.left - box.left) > 0.5 || Math.abs(a.top - box.top) > 0.5 ||
        Math.abs(a.right - box.right) > 0.5 || Math.abs(a.bottom - box.bottom) > 0.5) {
      return { ...fail('timeout', `${label} (${describe(el)}) kept moving`), retry: true };
    }
    const v = box.vis;
    if (v.right - v.left < 1 || v.bottom - v.top < 1) {
      return { ...fail('not_visible', `${label} (${describe(el)}) is outside the visible area even after scrolling`), retry: true };
    }
    const point = { x: (v.left + v.right) / 2, y: (v.top + v.bottom) / 2 };
    if (!opts.hitTest) return { ok: true, x: point.x, y: point.y, box: [box.left, box.top, box.right, box.bottom] };
    const dx = (v.right - v.left) / 4, dy = (v.bottom - v.top) / 4;
    const points = [[point.x, point.y], [v.left + dx, v.top + dy], [v.right - dx, v.top + dy],
      [v.left + dx, v.bottom - dy], [v.right - dx, v.bottom - dy],
      [point.x, v.top + 1], [point.x, v.bottom - 1]];
    let cover = null;
    for (const [x, y] of points) {
      const hit = deepHit(x, y);
      if (hit && contains(el, hit)) {
        return { ok: true, x, y, box: [box.left, box.top, box.right, box.bottom], at: t0,
          hidden: document.visibilityState === 'hidden' };
      }
      if (!cover && hit) cover = hit;
    }
    // Covered where it is now (a sticky header over the top rows, a
    // floating button at the edge): centre it once and look again.
    if (!inside || opts.recentred) {
      // Already centred in this attempt.
    } else {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      return prepare(found, { ...opts, recentred: true });
    }
    // The covering element is often a child of some fixed layer; name the
    // outermost element that is not an ancestor of the target, since that
    // is the one that has to go away.
    let named = cover;
    for (let e = cover; e && !contains(e, el); e = composedParent(e)) {
      const cs = getComputedStyle(e);
      if (cs.position === 'fixed' || cs.position === 'sticky' || cs.position === 'absolute') named = e;
    }
    return { ...fail('not_interactive', `${label} (${describe(el)}) is covered by ${describe(named)}`), retry: true };
  }

  // ---- operations on one element ----

  function nativeSetValue(el, value) {
    const proto = el.localName === 'textarea' ? HTMLTextAreaElement.prototype
      : el.localName === 'select' ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    const desc = Object.getOwnPropertyDescriptor(proto, 'value');
    desc.set.call(el, value);
  }
  const fire = (el, type) => el.dispatchEvent(new Event(type, { bubbles: true, composed: type === 'input' }));

  function currentText(el) {
    return editableKind(el) === 'contenteditable' ? (el.innerText || '').replace(/\n$/, '') : el.value;
  }

  // Focuses the field and selects what is in it, so typing replaces it.
  function focusAndSelect(el, selectAll) {
    el.focus({ preventScroll: true });
    if (editableKind(el) === 'contenteditable') {
      const sel = el.ownerDocument.getSelection();
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      if (!selectAll) range.collapse(false);
      sel.removeAllRanges();
      sel.addRange(range);
    } else if (selectAll) {
      el.select();
    } else {
      try { const n = el.value.length; el.setSelectionRange(n, n); } catch (_) { /* number fields */ }
    }
    return el.ownerDocument.activeElement === el || el.contains(el.ownerDocument.activeElement) ||
      (el.getRootNode && el.getRootNode().activeElement === el);
  }

  // The element that has focus, looking into shadow roots and frames.
  function deepActive(doc) {
    let a = doc.activeElement;
    for (let guard = 0; a && guard < 16; guard++) {
      if (a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
      let inner = null;
      if (a.localName === 'iframe') { try { inner = a.contentDocument; } catch (_) { inner = null; } }
      if (inner && inner.activeElement && inner.activeElement !== inner.body) { a = inner.activeElement; continue; }
      break;
    }
    return a;
  }

  // Focus for typing into a widget that is no field (a terminal, a game,
  // a custom editor reading keydown): the element itself, or, when it
  // takes no focus, the first thing inside it that does (a terminal's
  // hidden input). The executor then sends one key press per character.
  function focusForKeys(found) {
    const el = found.el;
    const focusedIn = () => { const a = deepActive(el.ownerDocument); return a && a !== el.ownerDocument.body && contains(el, a) ? a : null; };
    el.focus({ preventScroll: true });
    let into = focusedIn();
    if (!into) {
      const inner = el.querySelector('textarea, input, [contenteditable=""], [contenteditable="true"], [tabindex]:not([tabindex="-1"]), button, a[href]');
      if (inner) { inner.focus({ preventScroll: true }); into = focusedIn(); }
    }
    if (!into) {
      return { ...fail('not_interactive', `${found.label} (${describe(el)}) is not a text field or contenteditable and cannot take focus, so typed keys would go nowhere`), retry: false };
    }
    const out = { ok: true, done: false, keys: true };
    if (into !== el) out.into = describe(into);
    return out;
  }

  // ---- values for date, time, colour and range fields ----
  //
  // These controls take one exact format (`2011-10-11`, `20:04`, `#ff0000`)
  // and silently drop anything else, so text written as a person writes it
  // is read here and converted; what cannot be read fails with the format
  // the field wants, and the field is left alone.
  const MONTH_NAMES = 'january february march april may june july august september october november december'.split(' ');
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const fullYear = (y) => (y.length <= 2 ? (+y < 70 ? 2000 + +y : 1900 + +y) : +y);
  // 1–12 for a month name or its abbreviation (three letters at least).
  const monthOf = (word) => {
    const w = word.toLowerCase().replace(/\.$/, '');
    if (w.length < 3) return 0;
    if (w === 'sept') return 9;
    return MONTH_NAMES.findIndex((n) => n.startsWith(w)) + 1;
  };
  const validDate = (y, m, d) => {
    if (!(m >= 1 && m <= 12 && d >= 1 && y >= 1 && y <= 275760)) return null;
    const days = new Date(Date.UTC(2000, m, 0)).getUTCDate();
    const leap = m === 2 && d === 29 && !((y % 4 === 0 && y % 100 !== 0) || y % 400 === 0);
    if (d > days || leap) return null;
    return { y, m, d };
  };
  // {y, m, d} from ISO, MM/DD/YYYY (DD/MM/YYYY when the first number
  // cannot be a month), DD.MM.YYYY, DD-MM-YYYY or month names.
  function readDate(text) {
    const t = text.trim().replace(/,/g, ' ').replace(/\s+/g, ' ');
    let m = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(t);
    if (m) return validDate(+m[1], +m[2], +m[3]);
    m = /^(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4})$/.exec(t);
    if (m) return +m[1] > 12 ? validDate(fullYear(m[3]), +m[2], +m[1]) : validDate(fullYear(m[3]), +m[1], +m[2]);
    m = /^(\d{1,2})[.-](\d{1,2})[.-](\d{2}|\d{4})$/.exec(t);
    if (m) return validDate(fullYear(m[3]), +m[2], +m[1]);
    // Month names: "October 11 2011", "11 Oct 2011", "Tue, 11th October 2011".
    let month = 0, year = null, day = null;
    for (const word of t.split(' ')) {
      const mo = monthOf(word);
      if (mo) { month = mo; continue; }
      const n = /^(\d+)(st|nd|rd|th)?\.?$/i.exec(word);
      if (!n) continue;
      if (n[1].length === 4 && year === null) year = +n[1];
      else if (day === null && !n[2] && n[1].length <= 2 && +n[1] <= 31) day = +n[1];
      else if (day === null && n[2]) day = +n[1];
      else if (year === null) year = fullYear(n[1]);
    }
    if (month && year !== null && day !== null) return validDate(year, month, day);
    return null;
  }
  // [hours, minutes, seconds|null] from 24-hour or 12-hour (AM/PM) times.
  function readTime(text) {
    const t = text.trim().toLowerCase().replace(/\s+/g, ' ');
    if (t === 'noon') return [12, 0, null];
    if (t === 'midnight') return [0, 0, null];
    const m = /^(\d{1,2})(?:[:.h](\d{2}))?(?::(\d{2}))?\s*(?:([ap])\.?\s?m?\.?)?$/.exec(t);
    if (!m || (m[2] === undefined && !m[4])) return null;
    let h = +m[1];
    const min = m[2] === undefined ? 0 : +m[2];
    const sec = m[3] === undefined ? null : +m[3];
    if (m[4]) {
      if (h < 1 || h > 12) return null;
      h = (h % 12) + (m[4] === 'p' ? 12 : 0);
    }
    if (h > 23 || min > 59 || (sec !== null && sec > 59)) return null;
    return [h, min, sec];
  }
  const timeValue = (tm) => `${pad(tm[0])}:${pad(tm[1])}` + (tm[2] !== null ? `:${pad(tm[2])}` : '');
  const dateValue = (d) => `${pad(d.y, 4)}-${pad(d.m)}-${pad(d.d)}`;
  function isoWeek(d) {
    const date = new Date(Date.UTC(d.y, d.m - 1, d.d));
    const dow = date.getUTCDay() || 7;
    date.setUTCDate(date.getUTCDate() + 4 - dow);
    const start = new Date(Date.UTC(date.getUTCFullYear(), 0, 1));
    const week = Math.ceil(((date - start) / 86400000 + 1) / 7);
    return `${pad(date.getUTCFullYear(), 4)}-W${pad(week)}`;
  }
  const WANTS = {
    date: 'a date, e.g. 2011-10-11, 10/11/2011 (month first), 11.10.2011 or October 11, 2011; the field stores YYYY-MM-DD',
    time: 'a time, e.g. 20:04 or 8:04 PM; the field stores HH:MM (24-hour)',
    'datetime-local': 'a date and a time, e.g. 2011-10-11 20:04 or 10/11/2011 8:04 PM; the field stores YYYY-MM-DDTHH:MM',
    month: 'a month, e.g. 2011-10, 10/2011 or October 2011; the field stores YYYY-MM',
    week: 'a week, e.g. 2011-W41, week 41 2011 or a date in that week; the field stores YYYY-Www',
    color: 'a colour, e.g. #ff8800, #f80, rgb(255, 136, 0) or orange; the field stores #rrggbb',
    range: 'a number',
  };
  // The control's own format for `text`, or null when it cannot be read.
  function controlValue(type, text) {
    const t = String(text).trim();
    if (type === 'date') { const d = readDate(t); return d && dateValue(d); }
    if (type === 'time') { const tm = readTime(t); return tm && timeValue(tm); }
    if (type === 'datetime-local') {
      const iso = /^(\d{4}-\d{1,2}-\d{1,2})[T ](\d{1,2}:\d{2}(?::\d{2})?)$/.exec(t);
      if (iso) {
        const d = readDate(iso[1]), tm = readTime(iso[2]);
        return d && tm ? `${dateValue(d)}T${timeValue(tm)}` : null;
      }
      // The time is the tail: "<date>[,| at ]<time>".
      const m = /^(.*?)(?:,|\s|\sat\s)+(\d{1,2}(?:[:.]\d{2}){0,2}\s*(?:[ap]\.?\s?m\.?)?|noon|midnight)$/i.exec(t);
      if (!m) return null;
      const d = readDate(m[1].replace(/\s+at$/i, '')), tm = readTime(m[2]);
      return d && tm ? `${dateValue(d)}T${timeValue(tm)}` : null;
    }
    if (type === 'month') {
      let m = /^(\d{4})[-/.](\d{1,2})$/.exec(t) || null;
      if (m && +m[2] >= 1 && +m[2] <= 12) return `${m[1]}-${pad(+m[2])}`;
      m = /^(\d{1,2})[-/.](\d{4})$/.exec(t);
      if (m && +m[1] >= 1 && +m[1] <= 12) return `${m[2]}-${pad(+m[1])}`;
      const words = t.replace(/,/g, ' ').split(/\s+/);
      if (words.length === 2) {
        const mo = monthOf(words[0]) || monthOf(words[1]);
        const y = /^\d{4}$/.test(words[1]) ? words[1] : /^\d{4}$/.test(words[0]) ? words[0] : null;
        if (mo && y) return `${y}-${pad(mo)}`;
      }
      const d = readDate(t);
      return d && `${pad(d.y, 4)}-${pad(d.m)}`;
    }
    if (type === 'week') {
      let m = /^(\d{4})-?w(\d{1,2})$/i.exec(t);
      if (m) return `${m[1]}-W${pad(+m[2])}`;
      m = /^(?:w|week)\s*(\d{1,2})[,\s]+(\d{4})$/i.exec(t);
      if (m) return `${m[2]}-W${pad(+m[1])}`;
      const d = readDate(t);
      return d && isoWeek(d);
    }
    if (type === 'color') {
      let m = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(t);
      if (m) {
        const h = m[1].length === 3 ? m[1].replace(/./g, (c) => c + c) : m[1];
        return '#' + h.toLowerCase();
      }
      // Any CSS colour, read the way the browser reads it.
      const ctx = document.createElement('canvas').getContext('2d');
      if (!ctx) return null;
      // An unreadable colour leaves fillStyle as it was: two probes tell.
      const read = (probe) => { ctx.fillStyle = probe; ctx.fillStyle = t; return ctx.fillStyle; };
      const a = read('#000000'), b = read('#ffffff');
      return a === b && /^#[0-9a-f]{6}$/.test(a) ? a : null;
    }
    if (type === 'range') {
      const n = Number(t.replace(/[\s,]/g, '').replace(/%$/, ''));
      return t !== '' && Number.isFinite(n) ? String(n) : null;
    }
    return t;
  }

  // ---- selecting text ----
  //
  // select_text drags the real mouse from the passage's first character to
  // its last. Here the passage is found (by its words, whitespace ignored,
  // exact case first), the points are given, and afterwards the selection
  // is read back.
  const SKIP_TEXT = new Set(['script', 'style', 'noscript', 'template', 'textarea', 'option']);
  let passage = null;  // the Range select_text is dragging over

  // The visible text under `root` without its whitespace, and for each of
  // its characters the text node and offset it came from. The text is
  // read in the order the page shows it: into open shadow roots, with the
  // page's own nodes where a component's slots place them.
  function textIndex(root) {
    const shown = new Map();
    let flat = '';
    const nodes = [], offsets = [];
    const addText = (n) => {
      // Text right inside a shadow root shows as part of its host.
      const parent = n.parentElement || (n.parentNode && n.parentNode.host);
      if (!parent || SKIP_TEXT.has(parent.localName)) return;
      let ok = shown.get(parent);
      if (ok === undefined) {
        ok = parent.checkVisibility({ visibilityProperty: true });
        shown.set(parent, ok);
      }
      if (!ok) return;
      const t = n.data;
      for (let i = 0; i < t.length; i++) {
        if (/\s/.test(t[i])) continue;
        flat += t[i];
        nodes.push(n);
        offsets.push(i);
      }
    };
    const visit = (node) => {
      if (node.nodeType === 3) { addText(node); return; }
      if (node.nodeType === 1) {
        if (SKIP_TEXT.has(node.localName)) return;
        if (node.localName === 'slot') {
          const placed = node.assignedNodes({ flatten: true });
          if (placed.length) { for (const n of placed) visit(n); return; }
        }
      } else if (node.nodeType !== 11 && node.nodeType !== 9) {
        return;
      }
      for (let c = (node.shadowRoot || node).firstChild; c; c = c.nextSibling) visit(c);
    };
    visit(root);
    return { flat, nodes, offsets };
  }

  // Where `wanted` is in the index: [first, last] character positions, and
  // how many times it occurs. `start…end` (or `...`) spans from the first
  // part to the next occurrence of the second.
  function locate(index, wanted) {
    const bare = (s) => String(s).replace(/\s+/g, '');
    const parts = String(wanted).split(/…|\.\.\./).map(bare);
    const gap = parts.length === 2 && parts[0] && parts[1];
    const needles = gap ? parts : [bare(wanted)];
    if (!needles[0]) return null;
    for (const fold of [false, true]) {
      const hay = fold ? index.flat.toLowerCase() : index.flat;
      const want = needles.map((n) => (fold ? n.toLowerCase() : n));
      let at = hay.indexOf(want[0]);
      if (at < 0) continue;
      let count = 0;
      for (let i = at; i >= 0; i = hay.indexOf(want[0], i + 1)) count++;
      let last = at + want[0].length - 1;
      if (gap) {
        const end = hay.indexOf(want[1], last + 1);
        if (end < 0) continue;
        last = end + want[1].length - 1;
      }
      return { first: at, last, count };
    }
    return null;
  }

  // A character's box in top-level coordinates (frame offsets added).
  function charBox(node, offset) {
    const r = node.ownerDocument.createRange();
    r.setStart(node, offset);
    r.setEnd(node, offset + 1);
    const rects = r.getClientRects();
    const b = rects.length ? rects[0] : r.getBoundingClientRect();
    let left = b.left, top = b.top;
    for (let win = node.ownerDocument.defaultView; win && win.frameElement; win = win.frameElement.ownerDocument.defaultView) {
      const off = frameOffset(win.frameElement);
      left += off.x; top += off.y;
    }
    return { left, top, right: left + b.width, bottom: top + b.height };
  }

  const inView = (b) => b.top >= 0 && b.bottom <= window.innerHeight && b.left >= 0 && b.right <= window.innerWidth;

  // Scrolls a character into view when it is not, and returns its box.
  function shownChar(node, offset) {
    let b = charBox(node, offset);
    if (!inView(b)) {
      const r = node.ownerDocument.createRange();
      r.setStart(node, offset);
      r.setEnd(node, offset + 1);
      const mid = (b.top + b.bottom) / 2;
      // A range cannot scroll itself into view: move the page by the
      // character's distance from the viewport's middle.
      window.scrollBy({ top: mid - window.innerHeight / 2, left: b.right > window.innerWidth ? b.right - window.innerWidth + 20 : 0, behavior: 'instant' });
      b = charBox(node, offset);
    }
    return b;
  }

  const selectionOf = (doc) => squeeze(doc.getSelection() ? doc.getSelection().toString() : '');

  const textOps = {};
  // The link, image or draggable element a node sits in: a press there
  // and a move start dragging it, never a selection.
  function draggableAround(node) {
    for (let e = node.nodeType === 1 ? node : node.parentElement; e; e = composedParent(e)) {
      if ((e.localName === 'a' && e.hasAttribute('href')) || e.localName === 'img' ||
          e.getAttribute('draggable') === 'true') return e;
    }
    return null;
  }

  // A point beside `el` on the line at `y` (`side` -1 left, 1 right) where
  // a press starts a selection: inside the viewport, on nothing draggable.
  function besideDraggable(el, y, side) {
    const b = topBox(el);
    const x = side < 0 ? b.left - 2 : b.right + 2;
    if (x < 1 || x > window.innerWidth - 1) return null;
    const hit = deepHit(x, y);
    if (!hit || draggableAround(hit)) return null;
    return { x, y };
  }

  // Where a press or a release lands for one end of the passage: just
  // inside the first character's left half (the caret goes before it) or
  // the last character's right half (the caret goes after it).
  function endPoint(range, side) {
    const b = side < 0 ? shownChar(range.startContainer, range.startOffset)
      : shownChar(range.endContainer, range.endOffset - 1);
    const inset = Math.min(1, (b.right - b.left) / 4);
    return { x: side < 0 ? b.left + inset : b.right - inset, y: (b.top + b.bottom) / 2 };
  }

  textOps.textStart = async (found, args) => {
    let root = document.body;
    if (found) {
      root = found.el;
      if (!root.isConnected) return fail('not_found', `${found.label} is no longer in the page; observe again`);
      if (!visible(root)) return { ...fail('not_visible', `${found.label} (${describe(root)}) is hidden or has no size`), retry: true };
    }
    if (!root) return fail('not_found', 'the page has no body');
    const index = textIndex(root);
    let first = 0, last = index.flat.length - 1, count = 1;
    const where = found ? `${found.label} (${describe(root)})` : 'the page';
    if (args.text !== undefined) {
      const hit = locate(index, args.text);
      if (!hit) return { ...fail('not_found', `${where} shows no text ${JSON.stringify(clip(squeeze(args.text), 80))}; quote it as the page text shows it`), retry: true };
      ({ first, last, count } = hit);
    } else if (last < 0) {
      return { ...fail('not_found', `${where} shows no text to select`), retry: true };
    }
    // One range lives in one tree: a passage that starts in a component's
    // shadow root and ends in the page (or another component) cannot be
    // selected as one.
    if (index.nodes[first].getRootNode() !== index.nodes[last].getRootNode()) {
      return fail('invalid_params', `the text to select in ${where} runs across the edge of a component (a shadow root): quote the part inside it or the part outside`);
    }
    const range = (found ? root.ownerDocument : document).createRange();
    range.setStart(index.nodes[first], index.offsets[first]);
    range.setEnd(index.nodes[last], index.offsets[last] + 1);
    const holder = range.startContainer.parentElement || range.startContainer.parentNode.host;
    if (getComputedStyle(holder).userSelect === 'none') {
      return fail('not_interactive', `the page does not let the text in ${where} be selected (user-select: none)`);
    }
    const doc = range.startContainer.ownerDocument;
    // A press inside the current selection would drag the selected text
    // away instead of starting a new selection; a person clicks elsewhere
    // first, which here is letting go of the old selection.
    const current = doc.getSelection();
    if (current && !current.isCollapsed && current.rangeCount &&
        current.getRangeAt(0).isPointInRange(range.startContainer, range.startOffset)) {
      current.removeAllRanges();
    }
    // Forwards from the first character, unless it sits in a link (or
    // anything draggable): then from just before the link, or backwards
    // from just after the passage's end, as a person would start there.
    let press = endPoint(range, -1), backwards = false;
    const startDrag = draggableAround(range.startContainer);
    if (startDrag) {
      const before = besideDraggable(startDrag, press.y, -1);
      const endDrag = draggableAround(range.endContainer);
      const after = endDrag ? null : endPoint(range, 1);
      const beyond = before || after ? null : besideDraggable(endDrag, endPoint(range, 1).y, 1);
      if (before) press = before;
      else if (after || beyond) { press = after || beyond; backwards = true; }
    }
    const hit = deepHit(press.x, press.y);
    if (!hit || (!contains(hit, range.startContainer) && !contains(hit, range.endContainer) && !contains(root, hit) && !contains(hit, root))) {
      return { ...fail('not_interactive', `the text to select in ${where} is covered by ${describe(hit)}`), retry: true };
    }
    passage = { range, doc, backwards, changed: false };
    return { ok: true, x: press.x, y: press.y, occurrences: count };
  };

  // Whether the drag changed the selection at all.
  document.addEventListener('selectionchange', () => { if (passage) passage.changed = true; }, true);

  // Where the release lands, scrolled into view while the button is held
  // (as a person's drag scrolls the page).
  textOps.textEnd = async () => {
    if (!passage) return fail('unknown', 'no passage is being selected');
    const p = endPoint(passage.range, passage.backwards ? -1 : 1);
    return { ok: true, x: p.x, y: p.y };
  };

  // What the drag selected. A drag can take a character more or less
  // than meant (a caret snapping to a word's edge), or nothing (a press
  // the page turned into something else); the selection is then set to
  // the exact passage, and the result says what the drag took.
  textOps.textSelected = async () => {
    if (!passage) return fail('unknown', 'no passage is being selected');
    const { range, doc, changed } = passage;
    passage = null;
    const wanted = squeeze(range.toString());
    const dragged = changed ? selectionOf(doc) : '';
    const out = { ok: true };
    if (dragged !== wanted) {
      doc.getSelection().setBaseAndExtent(range.startContainer, range.startOffset, range.endContainer, range.endOffset);
      out.drag_selected = clip(dragged, 200);
    }
    const selected = doc.getSelection().toString();
    out.selected = selected.length > 2000 ? selected.slice(0, 2000) + ` (+${selected.length - 2000} more characters)` : selected;
    return out;
  };

  const parentKeys = new WeakMap();
  let parentCount = 0;
  let dragged = null;  // WeakRef to the element the last drag moved
  const SKIPPED_SIBLINGS = new Set(['script', 'style', 'template']);

  const ops = {
    // Returns the click point after the checks.
    point: async (found, args) => prepare(found, args),

    // After the mouse moved to the point: the box is where it was (stable
    // across the frame the move waited for) and the point still hits the
    // element (hover effects can open a menu over it).
    confirm: async (found, args) => {
      const el = found.el;
      if (!el.isConnected) return { ...fail('not_found', `${found.label} was removed from the page`), retry: false };
      if (performance.now() - args.at < 10) await nextFrame();
      const b = topBox(el);
      const [l, t, r, bt] = args.box;
      if (Math.abs(b.left - l) > 0.5 || Math.abs(b.top - t) > 0.5 || Math.abs(b.right - r) > 0.5 || Math.abs(b.bottom - bt) > 0.5) {
        return { ...fail('timeout', `${found.label} (${describe(el)}) kept moving`), retry: true };
      }
      const hit = deepHit(args.x, args.y);
      if (hit && contains(el, hit)) return { ok: true };
      return { ...fail('not_interactive', `${found.label} (${describe(el)}) is covered by ${describe(hit)}`), retry: true };
    },

    // Focus + select before Input.insertText. `value` kinds (date, colour)
    // cannot be typed into, so they are set here directly.
    beginFill: async (found, args) => {
      // Typing goes to the focused element, not to coordinates, so a field
      // that moves cannot make the text land elsewhere: no frame wait.
      const keys = !args.contentEditable;
      const p = await prepare(found, { enabled: true, editable: true, keys, hitTest: args.hitTest !== false, deferStable: true });
      if (!p.ok) return p;
      const el = found.el;
      const kind = editableKind(el);
      if (args.contentEditable && kind !== 'contenteditable') {
        return { ...fail('not_interactive', `${found.label} (${describe(el)}) is not contenteditable; use input_text for form fields`), retry: false };
      }
      if (!kind) return focusForKeys(found);
      if (kind === 'value') {
        const type = (el.getAttribute('type') || '').toLowerCase();
        const wanted = controlValue(type, args.text);
        const wants = WANTS[type] || 'another format';
        if (wanted === null) {
          return { ...fail('invalid_params', `${found.label} (${describe(el)}) is a ${type} field and cannot read ${JSON.stringify(args.text)}: it wants ${wants}`), retry: false };
        }
        el.focus({ preventScroll: true });
        nativeSetValue(el, wanted);
        fire(el, 'input'); fire(el, 'change');
        if (el.value !== wanted) {
          let limits = '';
          if (el.min || el.max || (el.step && el.step !== 'any')) limits = ` within min ${el.min || '-'} / max ${el.max || '-'} / step ${el.step || 'default'}`;
          return { ...fail('invalid_params', `${found.label} (${describe(el)}) did not take ${JSON.stringify(wanted)} (read from ${JSON.stringify(args.text)}); it holds ${JSON.stringify(el.value)} and wants ${wants}${limits}`), retry: false };
        }
        return { ok: true, done: true, value: el.value };
      }
      const focused = focusAndSelect(el, args.clear);
      if (args.clear && args.text === '' && currentText(el) !== '') {
        el.ownerDocument.execCommand('delete');
      }
      return { ok: true, done: false, focused, kind };
    },

    // After Input.insertText: checks the field holds what was meant and
    // repairs it through the native setter when a page swallowed the typing.
    endFill: async (found, args) => {
      const el = found.el;
      if (!el.isConnected) return fail('not_found', `${found.label} was removed from the page while typing`);
      const kind = editableKind(el);
      let now = currentText(el);
      const expected = args.clear ? args.text : null;
      let repaired = false;
      if (expected !== null && now !== expected) {
        if (kind === 'contenteditable') {
          el.textContent = expected;
          fire(el, 'input');
        } else {
          nativeSetValue(el, expected);
          fire(el, 'input');
        }
        repaired = true;
        now = currentText(el);
      }
      if (kind !== 'contenteditable') fire(el, 'change');
      if (expected !== null && now !== expected) {
        return fail('not_interactive', `${found.label} (${describe(el)}) did not keep the text: it holds ${JSON.stringify(clip(now, 80))}`);
      }
      return { ok: true, value: clip(now, 200), repaired };
    },

    select: async (found, args) => {
      const p = await prepare(found, { enabled: true, hitTest: false });
      if (!p.ok) return p;
      const el = found.el;
      if (el.localName !== 'select') return { ...fail('not_interactive', `${found.label} (${describe(el)}) is not a <select>`), retry: false };
      const options = Array.from(el.options);
      let opt = null;
      if (args.value !== undefined) opt = options.find((o) => o.value === args.value);
      else {
        const want = squeeze(args.text);
        opt = options.find((o) => squeeze(o.textContent) === want) ||
          options.find((o) => squeeze(o.textContent).toLowerCase() === want.toLowerCase());
      }
      if (!opt) {
        const names = options.slice(0, 15).map((o) => `${JSON.stringify(squeeze(o.textContent))} (value ${JSON.stringify(o.value)})`).join(', ');
        const asked = args.value !== undefined ? `value ${JSON.stringify(args.value)}` : `text ${JSON.stringify(args.text)}`;
        return { ...fail('invalid_params', `${found.label} has no option with ${asked}; options: ${names}`), retry: false };
      }
      if (opt.disabled) return { ...fail('not_interactive', `option ${JSON.stringify(squeeze(opt.textContent))} is disabled`), retry: false };
      el.focus({ preventScroll: true });
      opt.selected = true;
      fire(el, 'input'); fire(el, 'change');
      return { ok: true, value: opt.value, text: squeeze(opt.textContent) };
    },

    clear: async (found) => {
      const p = await prepare(found, { enabled: true, editable: true, hitTest: false });
      if (!p.ok) return p;
      const el = found.el;
      focusAndSelect(el, true);
      if (currentText(el) !== '') el.ownerDocument.execCommand('delete');
      if (currentText(el) !== '') {
        if (editableKind(el) === 'contenteditable') el.textContent = '';
        else nativeSetValue(el, '');
        fire(el, 'input');
      }
      if (editableKind(el) !== 'contenteditable') fire(el, 'change');
      return { ok: true };
    },

    submit: async (found) => {
      const el = found.el;
      if (!el.isConnected) return fail('not_found', `${found.label} is no longer in the page`);
      const form = el.localName === 'form' ? el : (el.form || el.closest('form'));
      if (!form) return fail('not_found', `${found.label} (${describe(el)}) is not a form and is not inside one`);
      if (!form.noValidate && !form.checkValidity()) {
        const bad = form.querySelector(':invalid');
        const why = bad ? `${describe(bad)}: ${bad.validationMessage}` : 'a field is invalid';
        return fail('not_interactive', `the form does not validate (${why})`);
      }
      const submitter = (el.localName === 'button' || el.localName === 'input') && el.form === form &&
        ['submit', 'image'].includes((el.type || '').toLowerCase()) ? el : undefined;
      form.requestSubmit(submitter);
      return { ok: true };
    },

    scrollTo: async (found) => {
      const el = found.el;
      if (!el.isConnected) return fail('not_found', `${found.label} is no longer in the page`);
      el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
      const b = topBox(el);
      return { ok: true, top: Math.round(b.top), visible: b.vis.bottom > b.vis.top };
    },

    scroll: async (found, args) => {
      let el = found ? found.el : null;
      const scrollable = (e) => {
        const cs = getComputedStyle(e);
        const vert = args.vertical;
        return vert ? e.scrollHeight > e.clientHeight + 1 && /(auto|scroll|overlay)/.test(cs.overflowY)
          : e.scrollWidth > e.clientWidth + 1 && /(auto|scroll|overlay)/.test(cs.overflowX);
      };
      // Scroll the element itself or its nearest scrollable ancestor.
      while (el && !(el === document.scrollingElement || el === document.body || el === document.documentElement) && !scrollable(el)) el = composedParent(el);
      let node = el;
      if (!node || node === document.body || node === document.documentElement) node = document.scrollingElement || document.documentElement;
      const page = node === (document.scrollingElement || document.documentElement);
      const span = args.vertical ? (page ? window.innerHeight : node.clientHeight) : (page ? window.innerWidth : node.clientWidth);
      const amount = span * args.pages * args.sign;
      const before = args.vertical ? node.scrollTop : node.scrollLeft;
      if (args.vertical) node.scrollBy({ top: amount, behavior: 'instant' });
      else node.scrollBy({ left: amount, behavior: 'instant' });
      const after = args.vertical ? node.scrollTop : node.scrollLeft;
      const max = args.vertical ? node.scrollHeight - node.clientHeight : node.scrollWidth - node.clientWidth;
      return { ok: true, scrolled: Math.round(after - before), position: Math.round(after),
        at_end: args.sign > 0 ? after >= max - 1 : after <= 0, container: page ? 'page' : describe(node) };
    },

    // HTML5 drag and drop, synthesized: Chromium only starts a native drag
    // from real OS input, so the page's handlers get DragEvents carrying one
    // shared DataTransfer instead. The pointer travels in steps (`path`,
    // top-level points) with dragenter/dragover on whatever lies under each
    // point, so sortables that reorder on dragover see it pass the target's
    // midpoint, and a frame passes between steps as it would for a person.
    html5Drag: async (found, args) => {
      const src = found.el;
      const dt = new DataTransfer();
      const ev = (type, el, x, y) => el.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, composed: true, dataTransfer: dt, clientX: x, clientY: y }));
      const [x0, y0] = args.path[0];
      ev('dragstart', src, x0, y0);
      let over = null;
      let last = [x0, y0];
      for (const [x, y] of args.path) {
        await nextFrame();
        if (!src.isConnected) break;
        ev('drag', src, x, y);
        const under = deepHit(x, y) || args.toEl;
        if (under !== over) {
          if (over) ev('dragleave', over, x, y);
          ev('dragenter', under, x, y);
          over = under;
        }
        ev('dragover', over, x, y);
        last = [x, y];
      }
      const dropped = over ? !ev('drop', over, last[0], last[1]) : false;
      ev('dragend', src, last[0], last[1]);
      return { ok: true, dropped };
    },

    // Where the element sits among its parent's element children, to tell
    // afterwards whether a drag moved it.
    // `keep` remembers the element and `again` reads the remembered one: a
    // selector such as `li:nth-child(1)` names another item once the list
    // has reordered.
    order: async (found, args) => {
      const el = args.again ? (dragged && dragged.deref()) : found.el;
      if (args.keep) dragged = new WeakRef(el);
      if (!el || !el.isConnected) return { ok: true, connected: false };
      const parent = el.parentElement;
      if (!parent) return { ok: true, connected: true };
      let key = parentKeys.get(parent);
      if (key === undefined) { parentCount += 1; key = parentCount; parentKeys.set(parent, key); }
      const siblings = Array.from(parent.children).filter((c) => !SKIPPED_SIBLINGS.has(c.localName));
      // Items of one sortable list share a tag and a class; a drop zone next
      // to the dragged card usually does not.
      const kind = el.localName + '.' + (typeof el.className === 'string' ? squeeze(el.className) : '');
      return { ok: true, connected: true, parent: key, index: siblings.indexOf(el), count: siblings.length, list: describe(parent), kind };
    },

    isDraggable: async (found) => {
      for (let e = found.el; e; e = composedParent(e)) {
        if (e.draggable && e.localName !== 'img' && e.localName !== 'a') return { ok: true, draggable: true };
      }
      return { ok: true, draggable: false };
    },

    // Marks the element for a CDP-side lookup (file inputs).
    mark: async (found, args) => {
      const el = found.el;
      if (!el.isConnected) return fail('not_found', `${found.label} is no longer in the page`);
      if (el.localName !== 'input' || (el.type || '').toLowerCase() !== 'file') {
        return fail('invalid_params', `${found.label} (${describe(el)}) is not a file input`);
      }
      if (el.disabled) return fail('not_interactive', `${found.label} (${describe(el)}) is disabled`);
      if (el.ownerDocument !== document) return fail('not_interactive', `${found.label} is inside a frame; upload_file works on the top document only`);
      el.setAttribute('data-webagent-mark', args.token);
      return { ok: true, multiple: el.multiple };
    },

    unmark: async (found) => { found.el.removeAttribute('data-webagent-mark'); return { ok: true }; },

    overlay: async (found, args) => overlays.draw(found ? found.el : null, args),

    ...textOps,
  };

  // ---- overlays ----
  // One fixed layer in a closed shadow root: it never takes part in layout,
  // pointer-events:none lets every click through, and the page's CSS cannot
  // reach inside. Boxes follow their elements on scroll and resize.
  const overlays = (() => {
    let host = null, root = null, items = [], raf = 0;
    const place = () => {
      raf = 0;
      for (const it of items) {
        if (!it.el) continue;
        if (!it.el.isConnected) { it.node.style.display = 'none'; continue; }
        const b = topBox(it.el);
        it.position(it.node, b);
      }
    };
    const schedule = () => { if (!raf) raf = requestAnimationFrame(place); };
    function ensure() {
      if (host && host.isConnected) return;
      host = document.createElement('webagent-overlay');
      host.setAttribute('aria-hidden', 'true');
      host.style.cssText = 'all:initial;position:fixed;left:0;top:0;width:0;height:0;overflow:visible;pointer-events:none;z-index:2147483647;contain:layout style;';
      root = host.attachShadow({ mode: 'closed' });
      const style = document.createElement('style');
      style.textContent = '.o{position:fixed;pointer-events:none;box-sizing:border-box;font:12px/1.3 sans-serif}' +
        '.label{position:absolute;left:0;bottom:100%;background:#222;color:#fff;padding:1px 4px;border-radius:3px;white-space:nowrap}' +
        '.note{background:#fffbe6;color:#222;border:1px solid #e0c200;padding:2px 6px;border-radius:4px;max-width:320px}' +
        '.sub{left:50%;bottom:24px;transform:translateX(-50%);background:rgba(0,0,0,.78);color:#fff;padding:6px 14px;border-radius:6px;font-size:16px;max-width:80vw;text-align:center}';
      root.appendChild(style);
      document.documentElement.appendChild(host);
      addEventListener('scroll', schedule, { capture: true, passive: true });
      addEventListener('resize', schedule, { passive: true });
    }
    function box(el, css, position) {
      const node = document.createElement('div');
      node.className = 'o';
      node.style.cssText = css;
      root.appendChild(node);
      const it = { el, node, position };
      items.push(it);
      if (el) position(node, topBox(el));
      return node;
    }
    const around = (n, b) => { n.style.left = b.left + 'px'; n.style.top = b.top + 'px'; n.style.width = (b.right - b.left) + 'px'; n.style.height = (b.bottom - b.top) + 'px'; };
    const label = (node, text) => { if (!text) return; const l = document.createElement('div'); l.className = 'label'; l.textContent = text; node.appendChild(l); };
    function draw(el, args) {
      if (args.kind === 'clear') {
        const n = items.length;
        if (host) host.remove();
        removeEventListener('scroll', schedule, { capture: true });
        removeEventListener('resize', schedule);
        host = null; root = null; items = [];
        return { ok: true, removed: n };
      }
      if (el && !el.isConnected) return fail('not_found', 'the element is no longer in the page');
      if (el && !visible(el)) return fail('not_visible', `${describe(el)} is hidden, nothing to draw around`);
      ensure();
      const color = args.color;
      if (args.kind === 'highlight') {
        label(box(el, `background:${color || 'rgba(255,213,0,.35)'};`, around), args.label);
      } else if (args.kind === 'border') {
        label(box(el, `border:3px solid ${color || '#e53935'};`, around), args.label);
      } else if (args.kind === 'spotlight') {
        box(el, 'box-shadow:0 0 0 200vmax rgba(0,0,0,.55);border-radius:4px;', around);
      } else if (args.kind === 'inject') {
        const n = box(el, '', (node, b) => {
          node.style.left = b.left + 'px';
          if (args.position === 'before') { node.style.top = ''; node.style.bottom = (innerHeight - b.top + 4) + 'px'; }
          else { node.style.bottom = ''; node.style.top = (b.bottom + 4) + 'px'; }
        });
        n.classList.add('note');
        n.textContent = args.text;
      } else if (args.kind === 'subtitle') {
        for (const it of items) if (it.node.classList.contains('sub')) it.node.remove();
        items = items.filter((it) => !it.node.classList.contains('sub'));
        const n = box(null, '', () => {});
        n.classList.add('sub');
        n.textContent = args.text;
      }
      return { ok: true, overlays: items.length };
    }
    return { draw };
  })();

  // ---- settling and waiting ----

  // Late UI: timers the page set in answer to input (reported by the hook
  // in the page's world, listeners.js) and CSS transitions still running.
  let timersBusy = false;
  document.addEventListener('webagent:timers-busy', () => { timersBusy = true; }, true);
  const inputTimersPending = () => {
    timersBusy = false;
    document.dispatchEvent(new Event('webagent:timers?'));
    return timersBusy;
  };
  const transitions = new Map();  // element -> properties in transition
  const transitionKey = (e) => e.composedPath()[0];
  // Only transitions that reveal or move things count; colour changes on
  // hover are cosmetic and must not slow every click down.
  const REVEALING = /^(opacity|visibility|transform|translate|scale|height|max-height|width|max-width|top|left|right|bottom|clip-path|display)$/;
  addEventListener('transitionrun', (e) => {
    if (!REVEALING.test(e.propertyName)) return;
    const el = transitionKey(e);
    transitions.set(el, (transitions.get(el) || 0) + 1);
  }, true);
  const transitionDone = (e) => {
    if (!REVEALING.test(e.propertyName)) return;
    const el = transitionKey(e);
    const n = (transitions.get(el) || 0) - 1;
    if (n > 0) transitions.set(el, n); else transitions.delete(el);
  };
  addEventListener('transitionend', transitionDone, true);
  addEventListener('transitioncancel', transitionDone, true);
  const transitionsRunning = () => {
    for (const el of transitions.keys()) if (!el.isConnected) transitions.delete(el);
    return transitions.size > 0;
  };

  // When the document's load event fired and when the DOM last changed in
  // the moments after it (the helper goes into each new document as it
  // starts, so it sees both).
  let loadedAt = null, changedAt = -Infinity, paintedAt = null;
  // Whether the document was first rendered (style, layout and paint
  // properties all done once); Chromium often draws a frame before the
  // load when the parser pauses. Listening schedules no frame, as asking
  // for an animation frame would.
  let revealed = document.readyState !== 'loading';
  addEventListener('pagereveal', () => { revealed = true; }, { once: true });
  // How long after the load the DOM's changes are watched.
  const CHANGE_WATCH_MS = 5000;
  if (document.readyState !== 'complete') {
    addEventListener('load', () => {
      loadedAt = performance.now();
      // The first frame after the load, once it is painted: what a person
      // first sees of the page.
      requestAnimationFrame(() => setTimeout(() => { paintedAt = performance.now(); }, 0));
      const watch = new MutationObserver(() => { changedAt = performance.now(); });
      watch.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      // Only settling right after the navigation asks.
      setTimeout(() => watch.disconnect(), CHANGE_WATCH_MS);
    }, { once: true });
  }

  // The first look at a new document. Settling after a navigation asks
  // the page once its load is answered, and by then Chromium has begun the
  // first frame (60-130 ms of the page's thread on a table of 2,000
  // fields), so the observation after it waits for the frame too. Instead
  // an evaluation sent while the document loads waits here until
  // `pageshow`, which fires after every load listener in the same task,
  // and when the page is done by then (nothing changed since the load, no
  // work queued in the main world's hook, no revealing animation running,
  // no font loading) it takes the observation in that task, before the
  // frame. Otherwise settling goes on as before.
  let pageShown = document.readyState === 'complete';
  const lookers = [];
  let hookIdle = false, hookAnswered = false;
  document.addEventListener('webagent:idle!', () => { hookAnswered = true; hookIdle = true; }, true);
  document.addEventListener('webagent:busy!', () => { hookAnswered = true; hookIdle = false; }, true);
  const pageIdle = () => {
    hookAnswered = false;
    document.dispatchEvent(new Event('webagent:busy?'));
    return hookAnswered && hookIdle;
  };
  const doneLoading = () => loadedAt !== null && changedAt < loadedAt && pageIdle() &&
    !transitionsRunning() && !animationsRunning(-Infinity) &&
    !(document.fonts && document.fonts.status === 'loading');
  const look = (opts) => {
    if (!doneLoading()) return { early: false };
    // Before the first frame the observer avoids hit tests where it can:
    // each would make Chromium prepare the whole page for painting first.
    const asked = Object.assign({}, opts, { beforeFirstFrame: !revealed });
    try { return { early: true, observation: globalThis.__webagentObserver.observe(asked) }; }
    catch (e) { return { early: false, error: String(e && e.message || e) }; }
  };
  addEventListener('pageshow', () => {
    pageShown = true;
    for (const [opts, resolve] of lookers.splice(0)) resolve(look(opts));
  }, { once: true });
  function firstLook(opts) {
    if (window !== window.top) return Promise.resolve({ early: false });
    // A small page can be shown before the question reaches it; while the
    // change watch above still runs the same test holds, and the look
    // still spares settling its round trips.
    if (pageShown) {
      const recent = loadedAt !== null && performance.now() - loadedAt < CHANGE_WATCH_MS;
      return Promise.resolve(recent ? look(opts) : { early: false });
    }
    return new Promise((resolve) => lookers.push([opts, resolve]));
  }

  // Animations the action started that move or reveal something and will
  // end: CSS animations and transitions, and the Web Animations API, all
  // of which document.getAnimations() lists. Ones that began before the
  // action (`since`, in the page's clock) are the page's own business, and
  // endless ones (spinners) never finish, so neither is waited for.
  const kebab = (name) => name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
  function reveals(animation) {
    if (animation.transitionProperty) return REVEALING.test(animation.transitionProperty);
    const effect = animation.effect;
    if (!effect || !effect.getKeyframes) return false;
    for (const frame of effect.getKeyframes()) {
      for (const key of Object.keys(frame)) {
        if (REVEALING.test(kebab(key))) return true;
      }
    }
    return false;
  }
  function animationsRunning(since) {
    if (!document.getAnimations) return false;
    for (const a of document.getAnimations()) {
      if (a.playState !== 'running') continue;
      if (a.startTime !== null && a.startTime < since) continue;
      const timing = a.effect && a.effect.getComputedTiming ? a.effect.getComputedTiming() : null;
      if (!timing || !Number.isFinite(timing.endTime)) continue;
      if (reveals(a)) return true;
    }
    return false;
  }

  // Resolves once no DOM mutation happened for `quiet` ms, no timer or
  // animation frame the action's input started is pending, and no
  // transition or animation the action started runs (or after `max`).
  // `sinceAgo` is how long ago the action began. A page that starts
  // nothing is done after one quiet period.
  function domQuiet(quiet, max, sinceAgo, afterLoad) {
    return new Promise((resolve) => {
      const start = performance.now();
      const since = start - (sinceAgo || 0) - 50;
      let last = start, mutations = 0, lateWait = false;
      // After a navigation the quiet counts from the new document's load
      // (or its last change since), not from when settling asks; and a
      // document that has not changed since its load is settled once the
      // first frame after the load is painted, as a person then sees it.
      const loaded = afterLoad && loadedAt !== null;
      if (loaded) last = Math.min(start, Math.max(loadedAt, changedAt));
      const painted = () => loaded && paintedAt !== null && changedAt < loadedAt && mutations === 0;
      const obs = new MutationObserver((records) => { mutations += records.length; last = performance.now(); });
      obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      const check = () => {
        const now = performance.now();
        const quietNow = now - last >= quiet || painted();
        const late = quietNow && (inputTimersPending() || transitionsRunning() || animationsRunning(since));
        if (late) lateWait = true;
        if ((quietNow && !late) || now - start >= max) {
          obs.disconnect();
          resolve({ ok: true, mutations, waited: Math.round(now - start), capped: !quietNow || late, late: lateWait });
        } else {
          // Until the first frame after a load is painted, look often.
          const until = late ? Math.min(quiet, 16) : Math.max(1, quiet - (now - last));
          setTimeout(check, loaded && paintedAt === null ? Math.min(until, 2) : until);
        }
      };
      const first = painted() ? 0 : Math.min(quiet - (performance.now() - last), loaded ? 2 : quiet);
      if (first <= 0) check(); else setTimeout(check, first);
    });
  }

  function present(args) {
    if (args.selector !== undefined) {
      let matches;
      try { matches = document.querySelectorAll(args.selector); }
      catch (e) { return fail('invalid_params', `the browser cannot read selector \`${args.selector}\`: ${e.message}`); }
      const count = Array.from(matches).filter(visible).length;
      return { ok: true, found: count > 0, count };
    }
    const text = document.body ? document.body.innerText : '';
    return { ok: true, found: text.includes(args.text) };
  }

  // The observer reads the page as observations do (icons named, fields'
  // values quoted exactly), so read_page and the page text agree.
  function readPage(args) {
    const read = globalThis.__webagentObserver.read(args.limit);
    return { ok: true, url: location.href, title: document.title, text: read.text,
      clipped: read.clipped, chars: read.chars };
  }

  async function run(target, op, args) {
    try {
      let found = null;
      if (target) {
        found = find(target);
        if (!found.ok) return found;
        if (args && args.to) {
          const to = find(args.to);
          if (!to.ok) return to;
          args.toEl = to.el;
        }
      }
      const result = await ops[op](found, args || {});
      if (found && found.matched !== undefined && result && result.ok) {
        result.matched = found.matched;
        result.used = found.used;
      }
      return result;
    } catch (e) {
      return fail('unknown', `the page raised an error during ${op}: ${e && e.message ? e.message : e}`);
    }
  }

  // Where a selector leads in this document: here, or into a frame of
  // another origin (`cross`, with the part that finds the <iframe> and the
  // rest for inside it).
  function route(selector) {
    const p = globalThis.__webagentObserver.pierce(selector);
    if (p.error === 'missing') return { ...fail('not_found', p.detail), retry: true };
    if (p.error) return fail('invalid_params', `the browser cannot read selector \`${selector}\`: ${p.detail}`);
    if (p.cross) return { ok: true, cross: true, prefix: p.prefix, rest: p.rest };
    return { ok: true, cross: false };
  }

  globalThis.__webagentAct = {
    run,
    route,
    domQuiet,
    firstLook,
    present,
    readPage,
    marker: Math.random(),
  };
  return 'installed';
})()
