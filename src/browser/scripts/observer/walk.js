  function observe(opts) {
    labelsByRoot = new Map();
    fieldCounts = new Map();
    headersByTable = new Map();
    // Reading (read_page): the whole page's text with fields' values, and
    // nothing listed, so the latest observation's indices stay valid.
    const reading = !!opts.read;
    const full = reading || !!opts.fullPage;
    const withListeners = !reading && opts.listeners !== false;
    const textLimit = opts.textLimit || 4000;
    const topDoc = document;
    const vw = window.innerWidth, vh = window.innerHeight;
    // Where stray fixed widgets usually sit (see walkStrayFixed).
    const STRAY_SPOTS = [[vw - 30, vh - 30], [30, vh - 30], [vw / 2, vh - 15], [vw - 30, 30]];
    // A cross-origin frame is observed on its own, told which part of it
    // the top page shows (`view`) and which part lies in the top page's
    // band (`band`), both in its own coordinates.
    const rect = (a) => ({ left: a[0], top: a[1], right: a[2], bottom: a[3] });
    const viewport = opts.view ? rect(opts.view) : { left: 0, top: 0, right: vw, bottom: vh };
    const margin = full ? Infinity : (opts.marginPx >= 0 ? opts.marginPx : vh / 2);
    const band = opts.band && !full ? rect(opts.band)
      : { top: -margin, bottom: vh + margin, left: -margin, right: vw + margin };
    const candidates = [];  // interactive elements in document order, before the covered check
    const walked = full ? null : new Set();  // elements whose styles were read (default mode)
    const rowsInside = new Set();  // table rows whose box lies wholly inside the band
    const cellsInside = new Set(); // cells of those rows, laid out as cells
    const occluders = [];   // positioned boxes that may paint over others
    // Skipped elements of the top document that have children, as
    // [element, inShadow] pairs flattened, kept for the stray-fixed search
    // by style (before the first frame) while there are few of them.
    const strayByStyle = !full && !!opts.beforeFirstFrame;
    const skipped = [];
    let skippedMany = false;
    function keepSkipped(el, frame, inShadow) {
      if (!strayByStyle || skippedMany || frame !== rootFrame) return;
      if (el.firstElementChild === null && !el.shadowRoot) return;
      if (skipped.length >= 2 * STRAY_SCAN_LIMIT) { skippedMany = true; return; }
      skipped.push(el, inShadow);
    }
    let skippedAbove = 0, skippedBelow = 0;
    const text = [];
    let textLen = 0, textCut = false, textSeen = 0;
    let iconQuiet = 0;              // > 0 inside an icon already named in the text

    // Text keeps the spaces the page has and adds none: inline elements
    // join their neighbours as a reader sees them ("Click <b>here</b>."
    // reads "Click here."). Blocks end lines; table cells are spaced.
    // Preformatted text (`raw`) keeps its own spaces.
    let lastChar = '\n';
    const addText = (s, raw) => {
      if (!raw && s[0] === ' ' && (lastChar === ' ' || lastChar === '\n')) s = s.slice(1);
      if (!s) return;
      textSeen += s.length;
      // Once cut, nothing more: a shorter word further on would fit in
      // the room left and read as if it came next.
      if (textCut || textLen >= textLimit) { if (s.trim()) textCut = true; return; }
      if (textLen + s.length > textLimit) { s = wordsUpTo(s, textLimit - textLen); textCut = true; }
      if (!s) return;
      text.push(s); textLen += s.length; lastChar = s[s.length - 1];
    };
    // The longest start of `s` of at most `n` characters that ends between
    // words; a word longer than all of the room is cut only when nothing
    // was read yet.
    const wordsUpTo = (s, n) => {
      if (/\s/.test(s[n])) return s.slice(0, n);
      for (let i = n - 1; i >= 0; i--) if (/\s/.test(s[i])) return s.slice(0, i);
      return textLen === 0 ? s.slice(0, n) : '';
    };
    const addBreak = (spaceOnly) => {
      if (lastChar === '\n') return;
      if (spaceOnly) { addText(' '); return; }
      newLine();
    };
    // A line break, also right after one (a blank line of code).
    const newLine = () => {
      if (textCut || textLen >= textLimit) return;
      if (lastChar === ' ') { const t = text.pop(); text.push(t.slice(0, -1)); textLen -= 1; }
      text.push('\n'); textLen += 1; lastChar = '\n';
    };
    // The text read, and cut at its limit back to its last whole line
    // when one ends near there.
    const readText = () => {
      let t = text.join('');
      if (textCut) {
        t = t.trimEnd();
        const line = t.lastIndexOf('\n');
        if (line >= t.length * 0.75) t = t.slice(0, line);
      }
      return t.trim();
    };
    // Preformatted text keeps its line breaks (a `//` comment ends at its
    // line), and its spaces where its style keeps them; the listing's one
    // line takes it squeezed.
    function addLines(data, owner, spaces) {
      const lines = data.split('\n');
      for (let i = 0; i < lines.length; i++) {
        if (i > 0) newLine();
        const line = spaces ? lines[i].replace(/\r$/, '') : lines[i].replace(/\s+/g, ' ');
        if (line) addText(line, spaces);
      }
      const s = data.replace(/\s+/g, ' ');
      if (s) ownerText(owner, s, s !== ' ');
    }
    // A listed element's text holds the words of the listed elements
    // inside it too (a signature's linked types, a line of code's linked
    // macro): each listed ancestor takes them while it has room. An
    // ancestor took all its descendant took, so the first full one ends
    // the climb. `words`: they are words, not a picture's token, which
    // alone leaves the element to be named (a link around a logo);
    // `ownWords` marks the element they are directly in.
    function ownerText(owner, s, words) {
      if (words && owner) owner.ownWords = true;
      for (let o = owner; o && o.text.length < TEXT_PER_ELEMENT; o = upward(o)) {
        const t = o.text && !o.text.endsWith(' ') ? s : s.replace(/^ /, '');
        o.text = (o.text + t).slice(0, TEXT_PER_ELEMENT + 1);
        if (words) o.worded = true;
      }
    }
    const ownerSpace = (owner) => {
      for (let o = owner; o && o.text.length < TEXT_PER_ELEMENT; o = upward(o)) {
        if (o.text && !o.text.endsWith(' ')) o.text += ' ';
      }
    };
    // The listed element whose text takes the words of `o` too. A frame's
    // words stay with its <iframe>, as those of a frame of another origin
    // (observed on its own) must.
    const upward = (o) => (o.tag === 'iframe' || !o.owner || o.owner.tag === 'iframe' ? null : o.owner);

    // An element's box in top-level coordinates, and whether it has any
    // size at all.
    function boxOf(el, frame) {
      const r = el.getBoundingClientRect();
      return { left: r.left + frame.ox, top: r.top + frame.oy, right: r.right + frame.ox,
        bottom: r.bottom + frame.oy, sized: r.width > 0 || r.height > 0 };
    }
    // Outside the band only the box is read (above or left of it, also how
    // far its content reaches): no styles, no descent.
    function outsideBand(box, el) {
      if (!box.sized || (box.bottom >= band.top && box.top <= band.bottom && box.right >= band.left && box.left <= band.right)) return false;
      // Content overflows its box the way text flows, down and right: a
      // box above or left of the band may hold what shows in it (a body of
      // `height: 100%` on a longer page). Below or right of it, nothing
      // reaches back.
      if ((box.bottom < band.top || box.right < band.left) && reachesBand(el, box)) return false;
      // Boxes beside the band (skip links parked at -9999px) are out of
      // reach by scrolling up or down; they are not "below".
      if (box.bottom < band.top) skippedAbove += 1;
      else if (box.top > band.bottom) skippedBelow += 1;
      return true;
    }

    // Whether what `el` (above or left of the band) holds overflows its box
    // into the band: its content's extent (the box's own unless the
    // content overflows) reaches the band on that side, and nothing clips
    // it to the box. Layout is read here, a style only for a box whose
    // content does reach.
    function reachesBand(el, box) {
      if (el.firstChild === null) return false;
      const above = box.bottom < band.top;
      if (above ? box.left > band.right || box.top + el.clientTop + el.scrollHeight < band.top
        : box.top > band.bottom || box.left + el.clientLeft + el.scrollWidth < band.left) return false;
      // The body's overflow is the viewport's (the walk clips at neither).
      if (el.localName === 'body') return true;
      const cs = getComputedStyle(el);
      return (above ? cs.overflowY : cs.overflowX) === 'visible';
    }

    // frame: { doc, ox, oy (offset of its content in top coordinates), view
    // (its visible rect in top coordinates), cand (the iframe's candidate),
    // clicky }. `clipRect` is what ancestors with clipping overflow leave
    // visible; `positioned` says an ancestor-or-self is out of flow.
    // Every document's first look runs this before the JIT has seen it, so
    // it allocates as little as it can: no closures, no option objects.
    function walk(el, frame, owner, parentPointer, inShadow, clipRect, positioned) {
      const tag = el.localName;
      if (SKIP.has(tag)) return;
      let box = null;
      // A table cell starts at its row's top inside the row's width, so a
      // cell of a row wholly inside the band meets the band: it needs no
      // box for the test (a table of fields listed 1,000 cells).
      const cellOfRowInside = !full && (tag === 'td' || tag === 'th') && rowsInside.has(el.parentElement);
      // So does an element with nothing inside that such a cell holds in
      // its flow (the field of a table of fields): nothing below it needs
      // its box as a clip, and its position is read before it is trusted.
      const inCellInside = !full && !cellOfRowInside && el.firstElementChild === null &&
        cellsInside.has(el.parentElement) && !el.shadowRoot;
      if (!full && !cellOfRowInside && !inCellInside) {
        box = boxOf(el, frame);
        if (outsideBand(box, el)) { keepSkipped(el, frame, inShadow); return; }
      }
      if (walked) walked.add(el);
      const cs = getComputedStyle(el);
      const disp = cs.display;
      if (disp === 'none') return;
      // Restyled as something other than a cell, it may sit anywhere.
      if (cellOfRowInside && disp !== 'table-cell') {
        box = boxOf(el, frame);
        if (outsideBand(box, el)) { keepSkipped(el, frame, inShadow); return; }
      } else if (cellOfRowInside) {
        cellsInside.add(el);
      }
      if (!full && box !== null && (tag === 'tr' || disp === 'table-row') &&
        box.top >= band.top && box.bottom <= band.bottom && box.left >= band.left && box.right <= band.right) {
        rowsInside.add(el);
      }
      const visible = el.checkVisibility(SEEN_BY_EYE);
      if (!visible && (cs.opacity === '0' || cs.contentVisibility === 'hidden')) return;
      const position = cs.position;
      // Moved by its position, it may sit anywhere.
      if (inCellInside && position !== 'static') {
        box = boxOf(el, frame);
        if (outsideBand(box, el)) { keepSkipped(el, frame, inShadow); return; }
      }
      let myClip = clipRect, myPositioned = positioned;
      if (position === 'fixed') { myClip = frame.view; myPositioned = true; }
      else if (position === 'absolute' || position === 'sticky') myPositioned = true;
      const outOfFlow = position !== 'static' && (position !== 'relative' || cs.zIndex !== 'auto');
      // An <input> is a target by its tag and holds nothing the walk
      // visits, so its cursor and overflow would decide nothing: two style
      // reads fewer for each field of a form (a table of 2,000 fields).
      const field = tag === 'input';
      const cursor = field ? '' : cs.cursor;
      // A grab or move cursor marks something to drag, as a pointer marks
      // something to click.
      const pointer = cursor === 'pointer' || cursor === 'grab' || cursor === 'move' || cursor === '-webkit-grab';
      const ov = field ? 'visible' : cs.overflow;

      let interactive = false;
      let extra = null;
      if (visible) {
        if (NATIVE.has(tag)) {
          if (tag === 'a') interactive = el.hasAttribute('href') || pointer;
          else if (tag === 'input') interactive = (el.getAttribute('type') || '').toLowerCase() !== 'hidden';
          else if (tag === 'audio' || tag === 'video') interactive = el.hasAttribute('controls');
          else interactive = true;
        }
        if (!interactive && pointer && !parentPointer) interactive = true;
        if (!interactive && frame.clicky && frame.clicky.has(el)) interactive = true;
        // Items of a list that handles presses itself (sortables bind one
        // listener on the list) and draggable elements are targets too.
        // An element without attributes (most table cells and layout
        // boxes) needs none of the attribute lookups below.
        const attributed = interactive || el.hasAttributes();
        if (!interactive && attributed && el.getAttribute('draggable') === 'true') interactive = true;
        if (!interactive && frame.clicky && (tag === 'li' || (attributed && el.getAttribute('role') === 'listitem'))) {
          const up = el.parentElement;
          if (up && frame.clicky.has(up)) interactive = true;
        }
        if (!interactive && attributed && el.hasAttribute('onclick')) interactive = true;
        if (!interactive && attributed) {
          const role = el.getAttribute('role');
          if (role && WIDGET_ROLES.has(role)) interactive = true;
        }
        if (!interactive && attributed && el.hasAttribute('tabindex') && el.tabIndex >= 0) interactive = true;
        if (!interactive && el.isContentEditable) {
          const p = composedParent(el);
          interactive = !(p && p.isContentEditable);
        }
        // Only a box whose overflow can scroll is worth measuring.
        if (ov !== 'visible' && tag !== 'html' && tag !== 'body' && /auto|scroll|overlay/.test(ov)) {
          extra = scrollInfo(el, cs);
          if (extra) interactive = true;
        }
      }
      // The whole-page walk measures only what needs a box: candidates,
      // positioned layers, frames, and anything under a clipping ancestor.
      // A target in a cell's flow needs its box only where a positioned
      // layer may cover it (the covered check below reads it then); its
      // offset size says whether it has any.
      const sizedInCell = box === null && interactive && inCellInside && !outOfFlow && myClip === EVERYWHERE &&
        tag !== 'iframe' && 'offsetWidth' in el;
      if (box === null && !sizedInCell && (interactive || outOfFlow || myClip !== EVERYWHERE || tag === 'iframe')) box = boxOf(el, frame);
      const sized = sizedInCell ? el.offsetWidth > 0 || el.offsetHeight > 0 : box !== null && box.sized;
      if (sized && box !== null && !overlap(box, myClip)) return;
      if (!sized) interactive = false;
      if (outOfFlow && visible && sized && cs.pointerEvents !== 'none') {
        occluders.push({ el, frame, box, fixed: position === 'fixed' });
      }

      let cand = null;
      if (interactive) {
        cand = { el, tag, cs, extra, owner, frame, shadow: inShadow, box, clip: myClip,
          positioned: myPositioned, text: '', worded: false, ownWords: false, crossOrigin: false, covered: false };
        if (tag === 'select') {
          cand.text = optionList(el.options, "; select_option takes any option's visible text");
          cand.whole = true;
        }
        candidates.push(cand);
      }
      const textOwner = cand || owner;

      const cell = disp === 'table-cell' || tag === 'td' || tag === 'th';
      const blockish = !cell && (BLOCK.has(tag) || !(disp.startsWith('inline') || disp === 'contents'));
      if (blockish || cell) { addBreak(cell); ownerSpace(owner); }
      if (tag === 'select' || tag === 'input' || tag === 'textarea') {
        if (reading && visible) {
          const shown = fieldShown(el, tag);
          if (shown) { if (lastChar !== ' ' && lastChar !== '\n') addText(' '); addText(`${shown} `); }
        }
        return;
      }

      // A text-less inline icon in a sentence reads as [icon: name], with
      // the name the listing would give it (a guess unless it has a label);
      // a picture with alt text reads as that text, in a sentence or not
      // (a column of yes / no icons), as [icon: …] or [image: …].
      let icon = '';
      if (iconQuiet === 0 && visible && tag !== 'br' && tag !== 'wbr') {
        const alt = tag === 'img' ? altText(el) : '';
        if (alt || (disp.startsWith('inline') && textless(el, tag))) {
          if (box === null) box = boxOf(el, frame);
          const w = box.right - box.left, h = box.bottom - box.top;
          const small = w <= ICON_PX && h <= ICON_PX;
          if (w < 4 || h < 4) icon = '';
          else if (alt) icon = pictureToken(el, alt, small);
          else if (small) icon = iconToken(el, tag);
        }
      }
      if (icon) {
        if (lastChar !== ' ' && lastChar !== '\n') addText(' ');
        addText(`${icon} `);
        ownerSpace(owner);
        ownerText(owner, `${icon} `, false);
        iconQuiet += 1;
      }

      if (tag === 'iframe') {
        let doc = null;
        try { doc = el.contentDocument; } catch (_) { doc = null; }
        if (!doc) {
          if (cand) {
            // Another process holds its document: webagent observes it
            // separately and needs where its content sits and shows.
            cand.crossOrigin = true;
            const off = frameOffset(el, cs);
            const seen = intersect(intersect(box, myClip), frame.view);
            cand.frameAt = [frame.ox + off.x, frame.oy + off.y, seen.left, seen.top, seen.right, seen.bottom];
          }
          return;
        }
        if (!cand || !doc.body) return;
        const off = frameOffset(el, cs);
        // The frame's box clips its content and is the viewport of its
        // fixed elements.
        const view = intersect(box, myClip);
        const inner = { doc, ox: frame.ox + off.x, oy: frame.oy + off.y, view, cand,
          clicky: withListeners ? clickTargets(doc) : null };
        walk(doc.body, inner, cand, false, inShadow, view, false);
        return;
      }

      // Content outside a clipping box is invisible; in the default mode a
      // scroll container clips too (its hidden part is not in view), while
      // the whole-page mode lists what scrolling the container would show.
      if (ov !== 'visible' && box !== null && tag !== 'body' && tag !== 'html' && (!full || /hidden|clip/.test(ov))) {
        myClip = intersect(myClip, box);
      } else if (full && extra) {
        // Whole page: an inner scroll area's content counts wherever
        // scrolling it would bring it, also past a fixed sidebar's edge.
        myClip = EVERYWHERE;
      }
      const shadow = el.shadowRoot;
      if (shadow) {
        for (let c = shadow.firstChild; c; c = c.nextSibling) visit(c, frame, textOwner, pointer, true, myClip, myPositioned);
      }
      let lines = -1;  // how its text keeps line breaks (see keptLines); -1: not asked yet
      for (let c = el.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) {
          // Text directly in a hidden element (visibility, closed <details>)
          // is not readable; its element children decide for themselves.
          if (!visible) continue;
          // Only text with a line break asks the style whether it keeps
          // it; a break between blocks, already ended, adds nothing.
          if (lines === -1 && c.data.indexOf('\n') >= 0 && (lastChar !== '\n' || /\S/.test(c.data))) lines = keptLines(cs);
          if (lines > 0) { addLines(c.data, textOwner, lines === 2); continue; }
        }
        visit(c, frame, textOwner, pointer, inShadow, myClip, myPositioned);
      }
      if (icon) iconQuiet -= 1;
      if (blockish || cell) { addBreak(cell); ownerSpace(owner); }
    }

    function visit(node, frame, owner, parentPointer, inShadow, clipRect, positioned) {
      if (node.nodeType === 1) {
        walk(node, frame, owner, parentPointer, inShadow, clipRect, positioned);
      } else if (node.nodeType === 3) {
        const s = node.data.replace(/\s+/g, ' ');
        if (!s) return;
        addText(s);
        ownerText(owner, s, s !== ' ');
      }
    }

    const rootFrame = { doc: topDoc, ox: 0, oy: 0, view: viewport, cand: null,
      clicky: withListeners ? clickTargets(topDoc) : null };
    const start = topDoc.body || topDoc.documentElement;
    if (start) walk(start, rootFrame, null, false, false, EVERYWHERE, false);
    if (reading) return { text: readText(), clipped: textCut, chars: textSeen };
    if (!full) walkStrayFixed();

    // A fixed element nested in a container that lies outside the band (a
    // chat button inside the page footer) was skipped with that container.
    // A few hit tests where such widgets usually sit find them; each costs
    // little once the page has been drawn. Before its first frame, though,
    // the first hit test makes Chromium build the paint properties of the
    // whole page (12 ms on a table of 2,000 fields, 4 ms on a form of 500,
    // measured at the load event), work the frame would do anyway after
    // the look. Reading the style of every skipped element costs about a
    // microsecond each, so while they are few the search goes by style. It
    // keeps the fixed elements whose box holds one of the spots (or that
    // have no box of their own), so both searches list the same widgets.
    function walkStrayFixed() {
      const found = strayByStyle && !skippedMany ? fixedInSkipped() : null;
      if (found) {
        for (let i = 0; i < found.length; i += 2) walk(found[i], rootFrame, null, false, found[i + 1], EVERYWHERE, true);
        return;
      }
      for (const [x, y] of STRAY_SPOTS) {
        let hit = topDoc.elementFromPoint(x, y);
        if (!hit || walked.has(hit)) continue;
        let fixed = null;
        for (let e = hit; e && !walked.has(e); e = composedParent(e)) {
          if (getComputedStyle(e).position === 'fixed') fixed = e;
        }
        if (fixed) walk(fixed, rootFrame, null, false, false, EVERYWHERE, true);
      }
    }

    function atStraySpot(b) {
      if (!b.sized) return true;
      for (let i = 0; i < STRAY_SPOTS.length; i++) {
        const x = STRAY_SPOTS[i][0], y = STRAY_SPOTS[i][1];
        if (x >= b.left && x < b.right && y >= b.top && y < b.bottom) return true;
      }
      return false;
    }

    // The outermost fixed elements inside the skipped subtrees of the top
    // document, in document order as [element, inShadow] pairs flattened;
    // null when more than STRAY_SCAN_LIMIT elements would have to be read.
    function fixedInSkipped() {
      const found = [];
      let left = STRAY_SCAN_LIMIT;
      // What `el` holds: its children, then its open shadow root's.
      const search = (el, inShadow) => {
        for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
          if (--left < 0) return false;
          const cs = getComputedStyle(c);
          if (cs.display === 'none') continue;
          if (cs.position === 'fixed') {
            if (atStraySpot(boxOf(c, rootFrame))) found.push(c, inShadow);
            continue;
          }
          // A frame's fixed elements stay inside the frame's own box.
          if (c.localName !== 'iframe' && !search(c, inShadow)) return false;
        }
        return !el.shadowRoot || search(el.shadowRoot, true);
      };
      for (let i = 0; i < skipped.length; i += 2) {
        if (!search(skipped[i], skipped[i + 1])) return null;
      }
      return found;
    }

    // Covered check. In normal flow boxes do not overlap, so only elements
    // that share area with a positioned box are hit-tested (hit tests cost
    // time in proportion to the page on long lists). A fixed layer over
    // (nearly) the whole viewport, such as a modal backdrop, covers the page
    // at any scroll position, also where no hit test can reach.
    let blocker = null;
    const fixedLayers = [];  // the top document's fixed layers
    for (let i = 0; i < occluders.length; i++) {
      const o = occluders[i];
      if (!o.fixed || o.frame !== rootFrame) continue;
      fixedLayers.push(o);
      if (o.box.right - o.box.left >= vw * 0.9 && o.box.bottom - o.box.top >= vh * 0.9) blocker = o.el;
    }
    // Indexed loops and plain numbers: these run once per candidate, most
    // often in a document's first look, before the JIT has seen the code.
    // Without a positioned layer nothing can cover anything.
    for (let i = 0; occluders.length && i < candidates.length; i++) {
      const c = candidates[i];
      if (c.tag === 'iframe') continue;
      // The part of its box its clipping ancestors and its frame show.
      const b = c.box || (c.box = boxOf(c.el, c.frame)), k = c.clip, v = c.frame.view;
      const seenLeft = Math.max(b.left, k.left, v.left), seenTop = Math.max(b.top, k.top, v.top);
      const seenRight = Math.min(b.right, k.right, v.right), seenBottom = Math.min(b.bottom, k.bottom, v.bottom);
      const inView = seenRight > viewport.left && seenLeft < viewport.right && seenBottom > viewport.top &&
        seenTop < viewport.bottom && seenRight > seenLeft && seenBottom > seenTop;
      if (blocker && !ancestorOf(blocker, c.el) && (!inView || !c.positioned)) { c.covered = true; continue; }
      if (!inView) {
        if (!full && !c.positioned && fixedLayers.length && coveredOnceScrolled(c)) c.covered = true;
        continue;
      }
      let suspect = false;
      for (let j = 0; j < occluders.length; j++) {
        const o = occluders[j];
        if (o.el === c.el || !overlap(o.box, c.box)) continue;
        if (o.frame !== c.frame && o.frame !== rootFrame) continue;
        if (ancestorOf(o.el, c.el) || ancestorOf(c.el, o.el)) continue;
        suspect = true;
        break;
      }
      if (!suspect) continue;
      const area = intersect({ left: seenLeft, top: seenTop, right: seenRight, bottom: seenBottom }, viewport);
      const pts = samplePoints(area);
      c.covered = true;
      for (const [x, y] of pts) {
        const hit = deepHit(x, y);
        if (hit && ancestorOf(c.el, hit)) { c.covered = false; break; }
      }
    }

    // An element in the margin cannot be hit-tested where it is, but a fixed
    // layer stays put while the page scrolls: place the element where
    // scrolling just far enough would show it and see whether fixed layers
    // would cover every sample point there.
    function coveredOnceScrolled(c) {
      if (c.frame !== rootFrame) return false;
      const b = c.box;
      const h = b.bottom - b.top;
      let shift = 0;
      if (b.top >= vh) shift = h <= vh ? b.bottom - vh : b.top;
      else if (b.bottom <= 0) shift = b.top;
      else return false;
      const placed = intersect({ left: b.left, right: b.right, top: b.top - shift, bottom: b.bottom - shift }, viewport);
      const pts = samplePoints(placed);
      if (!pts.length) return false;
      const layers = [];
      for (const o of fixedLayers) {
        if (ancestorOf(o.el, c.el) || ancestorOf(c.el, o.el)) continue;
        layers.push(o.box);
      }
      if (!layers.length) return false;
      return pts.every(([x, y]) => layers.some((l) => x >= l.left && x <= l.right && y >= l.top && y <= l.bottom));
    }

    sequence += 1;
    listed = [];
    const seen = new Set();
    const elements = [];
    const lines = [];  // [candidate, its item] for tying repeated controls to rows
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[i];
      if (c.covered) continue;
      let p = c.owner;
      while (p && p.covered) p = p.owner;
      c.index = listed.length;
      c.depth = p ? p.depth + 1 : 0;
      listed.push(c.el);
      const id = stableId(c.el);
      seen.add(id);
      const attrs = attributesOf(c.el, c.tag);
      if (c.extra) attrs.push(['scrollable', c.extra]);
      if (c.tag !== 'input' && c.tag !== 'textarea' && c.el.isContentEditable) attrs.push(['contenteditable', '']);
      const words = c.whole ? c.text : c.worded ? clipWords(squeeze(c.text), TEXT_PER_ELEMENT) : '';
      if (!words && c.tag !== 'iframe' && c.tag !== 'select' && !attrs.some((a) => a[1] && (NAMED_BY.has(a[0]) || (a[0] === 'value' && /^(submit|button|reset)$/.test(c.el.type))))) {
        const named = nameFor(c.el, c.tag, c.cs);
        if (named) attrs.push(named);
      }
      if (c.tag === 'iframe') {
        const src = c.el.getAttribute('src');
        if (src !== null) attrs.push(['src', clip(src, 80)]);
      }
      let frameCand = c.frame.cand;
      while (frameCand && frameCand.covered) frameCand = frameCand.frame.cand;
      // Fields at their default are left out: a whole-page listing of a long
      // page is tens of thousands of entries.
      // The id lets a reader that keeps its own numbering (an MCP
      // client's listing) follow an element across observations.
      const item = { tag: c.tag, id };
      if (attrs.length) item.attrs = attrs;
      if (words) item.text = words;
      if (previousIds !== null && !previousIds.has(id)) item.isNew = true;
      if (p) { item.depth = c.depth; item.parent = p.index; }
      if (c.shadow) item.shadow = true;
      if (frameCand) item.frame = frameCand.index;
      if (c.crossOrigin) item.crossOrigin = true;
      if (c.frameAt) item.frameAt = c.frameAt;
      elements.push(item);
      lines.push([c, item, p]);
    }
    tieToRows(lines);
    unlistedOptions(lines);
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
      text: readText(),
      textClipped: textCut,
      textLimit,
    });
  }

