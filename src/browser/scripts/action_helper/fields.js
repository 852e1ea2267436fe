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
    const focusedIn = () => { const a = deepActive(el.ownerDocument); return a && a !== el.ownerDocument.body && ancestorOf(el, a) ? a : null; };
    el.focus({ preventScroll: true });
    let into = focusedIn();
    if (!into) {
      const inner = el.querySelector('textarea, input, [contenteditable=""], [contenteditable="true"], [tabindex]:not([tabindex="-1"]), button, a[href]');
      if (inner) { inner.focus({ preventScroll: true }); into = focusedIn(); }
    }
    if (!into && documentReadsKeys(el.ownerDocument)) {
      // Keys typed with nothing focused go to the document, where the page
      // reads them (a terminal drawn with divs, once clicked). Whatever
      // else holds the focus would take them instead.
      const held = deepActive(el.ownerDocument);
      if (held && held !== el.ownerDocument.body && typeof held.blur === 'function') held.blur();
      return { ok: true, done: false, keys: true, into: 'the document' };
    }
    if (!into) {
      return { ...fail('not_interactive', `${found.label} (${describe(el)}) is not a text field or contenteditable and cannot take focus, so typed keys would go nowhere`), retry: false };
    }
    const out = { ok: true, done: false, keys: true };
    if (into !== el) out.into = describe(into);
    return out;
  }

  // Whether the page listens for keys on the document (or the window, its
  // root or body), asked of the hook in the page's own world (listeners.js).
  function documentReadsKeys(doc) {
    let reads = false;
    const answer = () => { reads = true; };
    doc.addEventListener('webagent:keys!', answer);
    doc.dispatchEvent(new Event('webagent:keys?'));
    doc.removeEventListener('webagent:keys!', answer);
    return reads;
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

