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
      const off = frameOffset(f, getComputedStyle(f));
      left += off.x; right += off.x; top += off.y; bottom += off.y;
      vis = { left: vis.left + off.x, right: vis.right + off.x, top: vis.top + off.y, bottom: vis.bottom + off.y };
      win = f.ownerDocument.defaultView;
    }
    return { left, top, right, bottom, vis };
  }

  const visible = (el) => {
    if (!el.isConnected) return false;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 && r.height <= 0) return false;
    return el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
  };

