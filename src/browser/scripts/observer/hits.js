  // Sample points of a visible area (top-level coordinates) for hit tests:
  // the centre first, then points towards the corners.
  function samplePoints(a) {
    if (a.right - a.left < 1 || a.bottom - a.top < 1) return [];
    const cx = (a.left + a.right) / 2, cy = (a.top + a.bottom) / 2;
    const dx = (a.right - a.left) / 4, dy = (a.bottom - a.top) / 4;
    return [[cx, cy], [a.left + dx, a.top + dy], [a.right - dx, a.top + dy], [a.left + dx, a.bottom - dy], [a.right - dx, a.bottom - dy]];
  }

  // Elements of `doc` with click-like listeners, as reported by the hook
  // webagent installs in the page's main world (listeners.js): it answers a
  // query event with one event per element, and events reach both worlds.
  function clickTargets(doc) {
    const found = new Set();
    const onHit = (e) => { const t = e.composedPath()[0]; if (t) found.add(t); };
    doc.addEventListener('webagent:listener!', onHit, true);
    doc.dispatchEvent(new Event('webagent:listeners?'));
    doc.removeEventListener('webagent:listener!', onHit, true);
    return found;
  }

  // What checkVisibility tests: hidden, transparent or skipped content.
  const SEEN_BY_EYE = { opacityProperty: true, visibilityProperty: true };
  const EVERYWHERE = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };
  const overlap = (a, b) => a.right > b.left && a.left < b.right && a.bottom > b.top && a.top < b.bottom;
  const intersect = (a, b) => ({ left: Math.max(a.left, b.left), top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom) });

