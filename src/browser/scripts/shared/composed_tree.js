  // Shared by the observer and the action helper (each joins this part in
  // after its setup): walking up across shadow roots and same-origin
  // frames, and hit tests at a point in top-level viewport coordinates.

  // The composed parent: through shadow roots to their host.
  const composedParent = (node) => {
    if (node.parentElement) return node.parentElement;
    const root = node.parentNode;
    if (root && root.host) return root.host;
    return null;
  };

  // Whether `a` is `b` or one of its ancestors across shadow roots and
  // same-origin frames.
  function ancestorOf(a, b) {
    for (let e = b; e; ) {
      if (e === a) return true;
      const up = composedParent(e);
      if (up) { e = up; continue; }
      const win = e.ownerDocument && e.ownerDocument.defaultView;
      e = win ? win.frameElement : null;
    }
    return false;
  }

  // The frame's content offset in its parent's coordinates; `cs` is the
  // frame's computed style (the observer's walk has it at hand already).
  function frameOffset(f, cs) {
    const r = f.getBoundingClientRect();
    return { x: r.left + f.clientLeft + parseFloat(cs.paddingLeft || '0'),
      y: r.top + f.clientTop + parseFloat(cs.paddingTop || '0') };
  }

  // The topmost element at a point given in top-level viewport coordinates,
  // looking into open shadow roots and same-origin frames.
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
      const off = frameOffset(h, getComputedStyle(h));
      ox += off.x; oy += off.y; doc = d;
    }
    return null;
  }

