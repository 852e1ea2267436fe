// Prepares the page for a screenshot, in webagent's isolated world: draws
// the listed elements' boxes and indices, and blanks text fields that show
// a secret. Everything drawn lives in one layer the page cannot reach or be
// moved by: an absolutely placed host of zero size at the document's
// origin (no room taken in any layout), pointer-events off, above
// everything, whose content sits in a closed shadow root. `clear()` takes
// it away again.
//
// prepare(opts) → { vw, vh, sx, sy, pw, ph, marks: [{i, x, y, w, h, n}],
// masked, clip: {x, y, w, h} | null, error }
// opts.items are [label, own index] pairs of the elements this document
// lists itself (the label is the index drawn: the listing's, or the one a
// named session's workbench shows); opts.boxes the viewport boxes of
// elements listed inside frames of another origin (measured there);
// opts.fresh names the labels of elements new since the last look. Boxes and the clip come back
// in page CSS pixels (viewport position plus scroll), which is what
// Page.captureScreenshot's clip takes.
(() => {
  const KEY = '__webagentMarks';

  function clear() {
    const old = globalThis[KEY];
    if (old) {
      old.remove();
      globalThis[KEY] = null;
    }
  }

  // Roots to search for fields: the document and every open shadow root.
  function roots() {
    const found = [document];
    for (let i = 0; i < found.length; i++) {
      for (const el of found[i].querySelectorAll('*')) {
        if (el.shadowRoot) found.push(el.shadowRoot);
      }
    }
    return found;
  }

  const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'number']);

  // Fields whose shown text holds one of the secrets.
  function secretFields(secrets) {
    if (!secrets.length) return [];
    const holds = (text) => !!text && secrets.some((s) => text.includes(s));
    const out = [];
    for (const root of roots()) {
      for (const el of root.querySelectorAll('input, textarea, [contenteditable]')) {
        const tag = el.localName;
        if (tag === 'input' && !TEXT_TYPES.has((el.getAttribute('type') || '').toLowerCase())) continue;
        const text = tag === 'input' || tag === 'textarea' ? el.value : el.innerText;
        if (holds(text)) out.push(el);
      }
    }
    return out;
  }

  function prepare(opts) {
    clear();
    const se = document.scrollingElement || document.documentElement;
    const sx = window.scrollX, sy = window.scrollY;
    const vw = document.documentElement.clientWidth || window.innerWidth;
    const vh = document.documentElement.clientHeight || window.innerHeight;
    const reply = { vw, vh, sx, sy, pw: se.scrollWidth, ph: se.scrollHeight,
      marks: [], masked: 0, clip: null, error: null };
    const observer = globalThis.__webagentObserver;
    const boxOf = (seq, index) => {
      const r = JSON.parse(observer.call(seq, index, (el, a, h) => h.topRect(el), null));
      return r.ok ? r.value : null;
    };

    if (opts.clip) {
      let r = null;
      if (opts.clip.rect) {
        r = opts.clip.rect;
      } else if (opts.clip.selector !== undefined) {
        const got = JSON.parse(observer.callSelector(opts.clip.selector, (els, a, h) => {
          const el = els.find((e) => { const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; });
          return el ? h.topRect(el) : null;
        }, null));
        if (!got.ok) { reply.error = got.detail || 'the selector did not work'; return reply; }
        r = got.value;
        if (!r) { reply.error = `no visible element matches ${opts.clip.selector}`; return reply; }
      }
      if (r.width < 1 || r.height < 1) { reply.error = 'the element has no size on the page'; return reply; }
      reply.clip = { x: r.x + sx, y: r.y + sy, w: r.width, h: r.height };
    }

    const fields = secretFields(opts.secrets || []);
    const marks = [];
    if (opts.marks) {
      const found = (opts.items || []).map(([i, own]) => [i, boxOf(opts.seq, own)])
        .concat((opts.boxes || []).map((b) => [b.i, b]));
      for (const [i, r] of found) {
        if (!r || r.width < 1 || r.height < 1) continue;
        // Only what the viewport shows is drawn.
        if (r.x + r.width <= 0 || r.y + r.height <= 0 || r.x >= vw || r.y >= vh) continue;
        marks.push({ i, x: r.x + sx, y: r.y + sy, w: r.width, h: r.height, n: !!(opts.fresh && opts.fresh[i]) });
      }
      marks.sort((a, b) => a.i - b.i);
    }
    if (!marks.length && !fields.length) return reply;

    const host = document.createElement('webagent-marks');
    host.setAttribute('style', 'all: initial !important; position: absolute !important; ' +
      'left: 0 !important; top: 0 !important; width: 0 !important; height: 0 !important; ' +
      'overflow: visible !important; pointer-events: none !important; ' +
      'z-index: 2147483647 !important; display: block !important; contain: layout style !important;');
    const root = host.attachShadow({ mode: 'closed' });
    const style = document.createElement('style');
    // Each rule starts from nothing, so no style of the page reaches in
    // by inheritance (the <style> element itself keeps display: none).
    style.textContent = [
      '.b { all: initial; position: absolute; box-sizing: border-box; border: 3px solid var(--c); }',
      '.t { all: initial; position: absolute; background: var(--c); color: #111418;',
      '  font: bold 12px/14px monospace; padding: 0 3px; white-space: pre; }',
      '.m { all: initial; position: absolute; box-sizing: border-box; overflow: hidden; color: #9aa0a6;',
      '  font: 14px/1 sans-serif; padding: 0 6px; display: flex; align-items: center; }',
    ].join('\n');
    root.appendChild(style);
    const px = (v) => `${Math.round(v * 100) / 100}px`;

    for (const el of fields) {
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) continue;
      const cs = getComputedStyle(el);
      let bg = cs.backgroundColor;
      if (!bg || bg === 'transparent' || bg === 'rgba(0, 0, 0, 0)') bg = '#ffffff';
      const m = document.createElement('div');
      m.className = 'm';
      m.style.left = px(r.left + sx + 1);
      m.style.top = px(r.top + sy + 1);
      m.style.width = px(Math.max(0, r.width - 2));
      m.style.height = px(Math.max(0, r.height - 2));
      m.style.background = bg;
      m.textContent = '••••••••';
      root.appendChild(m);
      reply.masked++;
    }

    for (const k of marks) {
      const color = k.n ? opts.colors.fresh : opts.colors.listed;
      const b = document.createElement('div');
      b.className = 'b';
      b.style.setProperty('--c', color);
      b.style.left = px(k.x);
      b.style.top = px(k.y);
      b.style.width = px(k.w);
      b.style.height = px(k.h);
      root.appendChild(b);
      const t = document.createElement('div');
      t.className = 't';
      t.style.setProperty('--c', color);
      t.textContent = String(k.i);
      t.style.left = px(k.x);
      // Inside the box's top-left corner when it is tall enough, above it
      // otherwise (unless that leaves the viewport).
      const above = k.h < 28 && k.y - sy >= 14;
      t.style.top = px(above ? k.y - 14 : k.y);
      root.appendChild(t);
      reply.marks.push(k);
    }
    document.documentElement.appendChild(host);
    globalThis[KEY] = host;
    return reply;
  }

  return { prepare, clear };
})()
