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

