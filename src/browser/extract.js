// webagent's page observer. It is installed into an isolated world that
// webagent creates for each document, so the page's own scripts can neither
// see this state nor replace the DOM functions it calls.
//
// observe(opts) walks the flat tree (light DOM, open shadow roots, same-origin
// iframes) once and returns ONE JSON string: a single Runtime.evaluate round
// trip, no per-node CDP traffic. Outside the viewport plus a margin, a subtree
// whose box lies entirely outside that band is skipped without reading its
// styles, so the default observation costs what the visible part costs.
(() => {
  'use strict';
  if (globalThis.__webagentObserver) return 'ready';

  const NATIVE = new Set(['a', 'button', 'input', 'select', 'textarea', 'summary', 'option', 'iframe', 'audio', 'video']);
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base']);
  const WIDGET_ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton',
    'treeitem', 'listbox',
  ]);
  const BLOCK = new Set([
    'address', 'article', 'aside', 'blockquote', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption',
    'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main',
    'nav', 'ol', 'p', 'pre', 'section', 'table', 'tr', 'ul', 'br', 'td', 'th',
  ]);
  // Attributes that help a model choose between elements, in listing order.
  const KEPT = ['type', 'name', 'role', 'placeholder', 'aria-label', 'title', 'alt', 'href',
    'aria-expanded', 'aria-checked', 'aria-selected', 'aria-pressed', 'aria-haspopup',
    'aria-disabled', 'min', 'max', 'accept', 'multiple', 'readonly', 'required'];
  const TEXT_PER_ELEMENT = 100;

  const ids = new WeakMap();     // element -> stable id within this document
  let nextId = 1;
  let sequence = 0;               // observation number in this document
  let listed = [];                // index -> element, for the latest observation
  let previousIds = null;         // stable ids listed by the previous observation

  const stableId = (el) => {
    let id = ids.get(el);
    if (id === undefined) { id = nextId++; ids.set(el, id); }
    return id;
  };
  const squeeze = (s) => s.replace(/\s+/g, ' ').trim();
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

  // The composed parent: through shadow roots to their host.
  const composedParent = (node) => {
    if (node.parentElement) return node.parentElement;
    const root = node.parentNode;
    if (root && root.host) return root.host;
    return null;
  };

  // Elements stacked at a grid of viewport points, with their ancestors: the
  // subtrees these belong to are walked even when their own box lies far
  // away (a fixed chat button inside a footer, a modal portal).
  function anchoredAncestors(doc, vw, vh) {
    const keep = new Set();
    const cols = 8, rows = 6;
    for (let r = 0; r <= rows; r++) {
      for (let c = 0; c <= cols; c++) {
        const x = Math.min(vw - 1, Math.max(0, (c / cols) * vw));
        const y = Math.min(vh - 1, Math.max(0, (r / rows) * vh));
        for (const hit of doc.elementsFromPoint(x, y)) {
          for (let e = hit; e && !keep.has(e); e = composedParent(e)) keep.add(e);
        }
      }
    }
    return keep;
  }

  // A fixed layer that covers (nearly) the whole viewport, such as a modal
  // backdrop, covers the whole page at any scroll position; elements outside
  // the viewport cannot be hit-tested, so they are judged against it.
  function viewportBlocker(doc, vw, vh) {
    const top = doc.elementFromPoint(vw / 2, vh / 2);
    for (let e = top; e; e = composedParent(e)) {
      if (e === doc.body || e === doc.documentElement) return null;
      const cs = getComputedStyle(e);
      if (cs.position === 'fixed') {
        const r = e.getBoundingClientRect();
        if (r.width >= vw * 0.9 && r.height >= vh * 0.9) return e;
        return null;
      }
    }
    return null;
  }

  function scrollInfo(el, cs) {
    const vertical = el.scrollHeight > el.clientHeight + 1 && /(auto|scroll|overlay)/.test(cs.overflowY);
    const horizontal = el.scrollWidth > el.clientWidth + 1 && /(auto|scroll|overlay)/.test(cs.overflowX);
    if (!vertical && !horizontal) return null;
    if (vertical) {
      const h = el.clientHeight || 1;
      const up = el.scrollTop / h;
      const down = Math.max(0, el.scrollHeight - el.scrollTop - h) / h;
      return `${up.toFixed(1)} pages above, ${down.toFixed(1)} below`;
    }
    const w = el.clientWidth || 1;
    return `${(el.scrollLeft / w).toFixed(1)} pages left, ${(Math.max(0, el.scrollWidth - el.scrollLeft - w) / w).toFixed(1)} right`;
  }

  function attributesOf(el, tag) {
    const out = [];
    for (const name of KEPT) {
      const v = el.getAttribute(name);
      if (v === null) continue;
      if (name === 'role' && v === tag) continue;
      out.push([name, clip(squeeze(v), name === 'href' ? 80 : 60)]);
    }
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'checkbox' || type === 'radio') {
        if (el.checked) out.push(['checked', '']);
      } else if (type === 'password') {
        if (el.value) out.push(['value', '•'.repeat(Math.min(8, el.value.length))]);
      } else if (tag === 'select') {
        const opt = el.selectedOptions && el.selectedOptions[0];
        if (opt) out.push(['value', clip(squeeze(opt.textContent || ''), 60)]);
      } else if (el.value) {
        out.push(['value', clip(squeeze(el.value), 60)]);
      }
    }
    if (tag === 'option' && el.selected) out.push(['selected', '']);
    if (el.disabled || (el.getAttribute && el.matches(':disabled'))) out.push(['disabled', '']);
    return out;
  }

  // Sample points of a box (clipped to the visible band) for hit tests.
  function samplePoints(r, vw, vh) {
    const left = Math.max(r.left, 0), right = Math.min(r.right, vw);
    const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, vh);
    if (right - left < 1 || bottom - top < 1) return [];
    const cx = (left + right) / 2, cy = (top + bottom) / 2;
    const dx = (right - left) / 4, dy = (bottom - top) / 4;
    return [[cx, cy], [left + dx, top + dy], [right - dx, top + dy], [left + dx, bottom - dy], [right - dx, bottom - dy]];
  }

  function hitsSelf(el, hit) {
    for (let e = hit; e; e = composedParent(e)) if (e === el) return true;
    return false;
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

  function observe(opts) {
    const full = !!opts.fullPage;
    const withListeners = opts.listeners !== false;
    const textLimit = opts.textLimit || 4000;
    const topWin = window, topDoc = document;
    const vw = topWin.innerWidth, vh = topWin.innerHeight;
    const margin = full ? Infinity : (opts.marginPx >= 0 ? opts.marginPx : vh / 2);
    const band = { top: -margin, bottom: vh + margin, left: -margin, right: vw + margin };
    const anchored = full ? null : anchoredAncestors(topDoc, vw, vh);
    const blocker = viewportBlocker(topDoc, vw, vh);
    sequence += 1;
    listed = [];
    const seen = new Set();
    const elements = [];
    let skippedAbove = 0, skippedBelow = 0;
    const text = [];
    let textLen = 0, textCut = false;

    const addText = (s, block) => {
      if (textLen >= textLimit) { if (s) textCut = true; return; }
      if (block && text.length && text[text.length - 1] !== '\n') { text.push('\n'); textLen += 1; }
      if (!s) return;
      if (textLen + s.length + 1 > textLimit) { s = s.slice(0, textLimit - textLen); textCut = true; }
      if (text.length && text[text.length - 1] !== '\n') { text.push(' '); textLen += 1; }
      text.push(s); textLen += s.length;
    };

    // frame: { doc, ox, oy, clip: visible rect in top coords, index of its
    // iframe element or -1 }. Coordinates of boxes inside a frame are
    // shifted by the frame's offset to compare them with the top viewport.
    function walk(el, frame, owner, depth, parentPointer, inShadow, ownerText) {
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      const r = el.getBoundingClientRect();
      const top = r.top + frame.oy, bottom = r.bottom + frame.oy;
      const left = r.left + frame.ox, right = r.right + frame.ox;
      const sized = r.width > 0 || r.height > 0;
      if (!full && sized && !anchored.has(el) &&
          (bottom < band.top || top > band.bottom || right < band.left || left > band.right)) {
        if (bottom < band.top) skippedAbove += 1; else skippedBelow += 1;
        return;
      }
      const cs = getComputedStyle(el);
      const display = cs.display;
      if (display === 'none') return;
      const visible = el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
      if (!visible && (cs.opacity === '0' || cs.contentVisibility === 'hidden')) return;
      const cursor = cs.cursor;
      const pointer = cursor === 'pointer';

      let interactive = false;
      let extra = null;
      let crossOrigin = false;
      if (visible && sized) {
        const role = el.getAttribute('role');
        if (NATIVE.has(tag)) {
          if (tag === 'a') interactive = el.hasAttribute('href') || pointer;
          else if (tag === 'input') interactive = (el.getAttribute('type') || '').toLowerCase() !== 'hidden';
          else if (tag === 'audio' || tag === 'video') interactive = el.hasAttribute('controls');
          else interactive = true;
        }
        if (!interactive && role && WIDGET_ROLES.has(role)) interactive = true;
        if (!interactive && el.isContentEditable) {
          const p = composedParent(el);
          interactive = !(p && p.isContentEditable);
        }
        if (!interactive && pointer && !parentPointer) interactive = true;
        if (!interactive && el.hasAttribute('onclick')) interactive = true;
        if (!interactive && el.tabIndex >= 0 && el.hasAttribute('tabindex')) interactive = true;
        if (tag !== 'html' && tag !== 'body' && el.scrollHeight + el.scrollWidth > el.clientHeight + el.clientWidth + 1) {
          extra = scrollInfo(el, cs);
          if (extra) interactive = true;
        }
        if (!interactive && frame.clicky && frame.clicky.has(el)) interactive = true;
      }

      if (interactive) {
        // Covered check: inside the viewport hit-test sample points; outside
        // it, only a fixed full-viewport layer can be known to cover it.
        const inView = bottom > 0 && top < vh && right > 0 && left < vw;
        let covered = false;
        if (inView && tag !== 'iframe') {
          const pts = samplePoints(r, frame.doc === topDoc ? vw : frame.vw, frame.doc === topDoc ? vh : frame.vh);
          const root = el.getRootNode();
          const hitRoot = root.elementFromPoint ? root : frame.doc;
          covered = pts.length > 0;
          for (const [x, y] of pts) {
            if (frame.doc !== topDoc && (x + frame.ox < frame.clip.left || x + frame.ox > frame.clip.right ||
                y + frame.oy < frame.clip.top || y + frame.oy > frame.clip.bottom)) continue;
            const hit = hitRoot.elementFromPoint(x, y);
            if (hit && hitsSelf(el, hit)) { covered = false; break; }
          }
        } else if (!inView && blocker && frame.doc === topDoc && !hitsSelf(blocker, el)) {
          covered = true;
        }
        if (covered) interactive = false;
      }

      let myOwner = owner, myDepth = depth, myText = ownerText;
      if (interactive) {
        const index = listed.length;
        listed.push(el);
        const id = stableId(el);
        seen.add(id);
        const attrs = attributesOf(el, tag);
        if (extra) attrs.push(['scrollable', extra]);
        let isNew = previousIds !== null && !previousIds.has(id);
        const item = { index, tag, attrs, text: '', isNew, depth, parent: owner,
          shadow: inShadow, frame: frame.index, crossOrigin: false };
        if (tag === 'iframe') {
          const src = el.getAttribute('src');
          if (src !== null) attrs.push(['src', clip(src, 80)]);
          let inner = null;
          try { inner = el.contentDocument; } catch (_) { inner = null; }
          if (!inner) { crossOrigin = true; item.crossOrigin = true; }
        }
        if (tag === 'select') {
          const names = [];
          for (const o of el.options) { names.push(squeeze(o.textContent || '')); if (names.length >= 12) break; }
          const more = el.options.length > names.length ? ` (+${el.options.length - names.length} more)` : '';
          item.text = clip(names.join(' | '), 160) + more;
        }
        elements.push(item);
        myOwner = index; myDepth = depth + 1; myText = item;
      }

      if (BLOCK.has(tag)) addText('', true);
      if (tag === 'select') return;
      if (tag === 'input' || tag === 'textarea') return;

      if (tag === 'iframe') {
        if (crossOrigin || !visible) return;
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (!doc || !doc.body) return;
        const win = doc.defaultView;
        const ox = frame.ox + r.left + el.clientLeft + parseFloat(cs.paddingLeft || '0');
        const oy = frame.oy + r.top + el.clientTop + parseFloat(cs.paddingTop || '0');
        const clipRect = { left: Math.max(left, frame.clip.left), top: Math.max(top, frame.clip.top),
          right: Math.min(right, frame.clip.right), bottom: Math.min(bottom, frame.clip.bottom) };
        const inner = { doc, ox, oy, clip: clipRect, index: interactive ? myOwner : frame.index,
          clicky: withListeners ? clickTargets(doc) : null,
          vw: win ? win.innerWidth : r.width, vh: win ? win.innerHeight : r.height };
        walk(doc.body, inner, myOwner, myDepth, false, inShadow, myText);
        return;
      }

      const shadow = el.shadowRoot;
      if (shadow) {
        for (let c = shadow.firstChild; c; c = c.nextSibling) visit(c, frame, myOwner, myDepth, pointer, true, myText);
      }
      for (let c = el.firstChild; c; c = c.nextSibling) visit(c, frame, myOwner, myDepth, pointer, inShadow, myText);
      if (BLOCK.has(tag)) addText('', true);
    }

    function visit(node, frame, owner, depth, parentPointer, inShadow, ownerText) {
      if (node.nodeType === 1) {
        walk(node, frame, owner, depth, parentPointer, inShadow, ownerText);
      } else if (node.nodeType === 3) {
        const s = squeeze(node.data);
        if (!s) return;
        const p = node.parentElement;
        if (p && (p.localName === 'option')) return;
        addText(s, false);
        if (ownerText && ownerText.text.length < TEXT_PER_ELEMENT) {
          ownerText.text = clip(ownerText.text ? ownerText.text + ' ' + s : s, TEXT_PER_ELEMENT);
        }
      }
    }

    const rootFrame = { doc: topDoc, ox: 0, oy: 0, clip: { left: 0, top: 0, right: vw, bottom: vh }, index: null, vw, vh,
      clicky: withListeners ? clickTargets(topDoc) : null };
    const start = topDoc.body || topDoc.documentElement;
    if (start) walk(start, rootFrame, null, 0, false, false, null);

    previousIds = seen;
    const se = topDoc.scrollingElement || topDoc.documentElement;
    return JSON.stringify({
      sequence,
      url: location.href,
      title: topDoc.title,
      fullPage: full,
      marginPx: full ? -1 : margin,
      elements,
      skippedAbove,
      skippedBelow,
      scroll: { x: se.scrollLeft, y: se.scrollTop, viewportWidth: vw, viewportHeight: vh,
        pageWidth: se.scrollWidth, pageHeight: se.scrollHeight },
      text: text.join(''),
      textClipped: textCut,
      textLimit,
    });
  }

  // The element listed under `index` by observation `seq`, or why not.
  function resolve(seq, index) {
    if (seq !== sequence) return { error: 'stale', detail: `observation ${seq} was replaced by observation ${sequence}` };
    const el = listed[index];
    if (!el) return { error: 'unknown', detail: `observation ${seq} has no index ${index}` };
    if (!el.isConnected) return { error: 'gone', detail: `element ${index} (<${el.localName}>) is no longer in the page` };
    return { el };
  }

  // The box of an element in top-level viewport coordinates, across
  // same-origin frames.
  function topRect(el) {
    const r = el.getBoundingClientRect();
    let x = r.left, y = r.top;
    let win = el.ownerDocument.defaultView;
    while (win && win.frameElement) {
      const f = win.frameElement;
      const fr = f.getBoundingClientRect();
      const cs = getComputedStyle(f);
      x += fr.left + f.clientLeft + parseFloat(cs.paddingLeft || '0');
      y += fr.top + f.clientTop + parseFloat(cs.paddingTop || '0');
      win = f.ownerDocument.defaultView;
    }
    return { x, y, width: r.width, height: r.height };
  }

  globalThis.__webagentObserver = {
    observe: (opts) => observe(opts || {}),
    // Runs fn(element, args, helpers) on the element listed under index and
    // returns {ok, value} or {ok:false, error, detail} as a JSON string.
    call(seq, index, fn, args) {
      const found = resolve(seq, index);
      if (found.error) return JSON.stringify({ ok: false, error: found.error, detail: found.detail });
      const value = fn(found.el, args, { topRect, composedParent });
      return JSON.stringify({ ok: true, value: value === undefined ? null : value });
    },
    // Runs fn(elements, args, helpers) on the elements a CSS selector
    // matches in the top document.
    callSelector(selector, fn, args) {
      let matches;
      try { matches = Array.from(document.querySelectorAll(selector)); }
      catch (e) { return JSON.stringify({ ok: false, error: 'selector', detail: String(e.message || e) }); }
      const value = fn(matches, args, { topRect, composedParent });
      return JSON.stringify({ ok: true, value: value === undefined ? null : value });
    },
    sequence: () => sequence,
  };
  return 'installed';
})()
