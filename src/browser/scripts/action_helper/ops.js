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
      if (hit && ancestorOf(el, hit)) return { ok: true };
      return { ...fail('not_interactive', `${found.label} (${describe(el)}) is covered by ${describe(hit)}`), retry: true };
    },

    // Focus + select before typing. `value` kinds (date, colour) cannot be
    // typed into, so they are set here directly.
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
      // A line break typed into a text area is the Enter key; elsewhere it
      // goes in as text (Enter would submit a one-line field's form).
      return { ok: true, done: false, focused, kind, multiline: el.localName === 'textarea' };
    },

    // After typing: checks the field holds what was meant and
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

