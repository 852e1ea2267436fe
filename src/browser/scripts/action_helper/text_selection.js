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
      const off = frameOffset(win.frameElement, getComputedStyle(win.frameElement));
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
    if (!hit || (!ancestorOf(hit, range.startContainer) && !ancestorOf(hit, range.endContainer) && !ancestorOf(root, hit) && !ancestorOf(hit, root))) {
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

