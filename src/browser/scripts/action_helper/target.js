  // ---- finding the target ----

  // Resolves {seq, index} through the observer (the exact listed node) or
  // {selector} to the first visible match in the top document.
  function find(target) {
    if (target.selector !== undefined) {
      const p = globalThis.__webagentObserver.pierce(target.selector);
      if (p.error === 'missing') return { ...fail('not_found', p.detail), retry: true };
      if (p.error) return fail('invalid_params', `the browser cannot read selector \`${target.selector}\`: ${p.detail}`);
      // The executor sends the rest of a selector into the frame itself.
      if (p.cross) return { ...fail('not_found', `\`${p.prefix}\` is a frame of another origin that was not entered`), retry: true };
      let matches;
      try { matches = Array.from(p.root.querySelectorAll(p.last)); }
      catch (e) { return fail('invalid_params', `the browser cannot read selector \`${target.selector}\`: ${e.message}`); }
      // It may still appear: the executor retries until its time limit.
      if (!matches.length) return { ...fail('not_found', `no element matches \`${target.selector}\``), retry: true };
      let used = matches.findIndex(visible);
      if (used < 0) used = 0;
      return { ok: true, el: matches[used], matched: matches.length, used, label: target.label || `\`${target.selector}\`` };
    }
    let el = null;
    // In a frame the index is the frame's own; the label is the listing's.
    const label = target.label || `element ${target.index}`;
    const reply = JSON.parse(globalThis.__webagentObserver.call(target.seq, target.index, (e) => { el = e; return null; }, null));
    if (!reply.ok) {
      if (reply.error === 'stale' && globalThis.__webagentObserver.sequence() === 0) {
        return fail('not_found', `${label} is gone: the page navigated or reloaded since it was listed; observe again`);
      }
      const tail = reply.error === 'stale' ? '; use the latest listing' : '; observe again to get fresh indices';
      return fail('not_found', `${label} cannot be used: ${reply.detail}${tail}`);
    }
    return { ok: true, el, label };
  }

  // ---- actionability ----

  const nextFrame = () => new Promise((resolve) => {
    let done = false;
    const finish = () => { if (!done) { done = true; resolve(); } };
    requestAnimationFrame(finish);
    // A background tab may not paint; never wait on it for long.
    setTimeout(finish, 50);
  });

  function disabledWhy(el) {
    if (el.matches && el.matches(':disabled')) return 'is disabled';
    for (let e = el; e; e = composedParent(e)) {
      if (e.getAttribute && e.getAttribute('aria-disabled') === 'true') return 'is marked aria-disabled';
      if (e.inert) return 'is inert';
    }
    return null;
  }

  const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number']);
  function editableKind(el) {
    if (el.isContentEditable) return 'contenteditable';
    if (el.localName === 'textarea') return 'text';
    if (el.localName === 'input') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (TEXT_TYPES.has(t)) return 'text';
      if (['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'].includes(t)) return 'value';
    }
    return null;
  }

  // Checks attached, visible, enabled (editable), scrolls into view, waits
  // for a stable box and hit-tests the click point. Returns the point in
  // top-level coordinates, or why the element cannot take the action now.
  // `retry` tells the executor whether waiting could help.
  async function prepare(found, opts) {
    const el = found.el;
    const label = found.label;
    if (!el.isConnected) return { ...fail('not_found', `${label} is no longer in the page; observe again`), retry: false };
    if (!visible(el)) return { ...fail('not_visible', `${label} (${describe(el)}) is hidden or has no size`), retry: true };
    if (opts.enabled) {
      const why = disabledWhy(el);
      if (why) return { ...fail('not_interactive', `${label} (${describe(el)}) ${why}`), retry: true };
    }
    if (opts.editable) {
      const kind = editableKind(el);
      // `keys`: a widget that is no field (a terminal reading keydown) is
      // typed into with key events once it takes focus.
      if (!kind && !opts.keys) return { ...fail('not_interactive', `${label} (${describe(el)}) is not a text field or contenteditable`), retry: false };
      if (kind && el.readOnly) return { ...fail('not_interactive', `${label} (${describe(el)}) is read-only`), retry: true };
    }
    let box = topBox(el);
    const vw = window.innerWidth, vh = window.innerHeight;
    const inside = box.left >= 0 && box.top >= 0 && box.right <= vw && box.bottom <= vh &&
      box.vis.right - box.vis.left >= 1 && box.vis.bottom - box.vis.top >= 1;
    if (!inside) {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    }
    // Stable: the same box in this frame and the next one (layout is
    // synchronous, so the first reading already reflects the scroll).
    // A frame can be due right after this reading, so keep waiting until
    // at least ~10 ms have passed: a box that moves on timers shows it.
    const a = topBox(el);
    const t0 = performance.now();
    // A click checks stability itself: its mouse move waits for a frame,
    // and `confirm` compares the box after it.
    if (opts.deferStable) {
      box = a;
    } else {
      await nextFrame();
      if (performance.now() - t0 < 10) await nextFrame();
      box = topBox(el);
    }
    if (Math.abs(a.left - box.left) > 0.5 || Math.abs(a.top - box.top) > 0.5 ||
        Math.abs(a.right - box.right) > 0.5 || Math.abs(a.bottom - box.bottom) > 0.5) {
      return { ...fail('timeout', `${label} (${describe(el)}) kept moving`), retry: true };
    }
    const v = box.vis;
    if (v.right - v.left < 1 || v.bottom - v.top < 1) {
      return { ...fail('not_visible', `${label} (${describe(el)}) is outside the visible area even after scrolling`), retry: true };
    }
    const point = { x: (v.left + v.right) / 2, y: (v.top + v.bottom) / 2 };
    if (!opts.hitTest) return { ok: true, x: point.x, y: point.y, box: [box.left, box.top, box.right, box.bottom] };
    const dx = (v.right - v.left) / 4, dy = (v.bottom - v.top) / 4;
    const points = [[point.x, point.y], [v.left + dx, v.top + dy], [v.right - dx, v.top + dy],
      [v.left + dx, v.bottom - dy], [v.right - dx, v.bottom - dy],
      [point.x, v.top + 1], [point.x, v.bottom - 1]];
    let cover = null;
    for (const [x, y] of points) {
      const hit = deepHit(x, y);
      if (hit && ancestorOf(el, hit)) {
        return { ok: true, x, y, box: [box.left, box.top, box.right, box.bottom], at: t0,
          hidden: document.visibilityState === 'hidden' };
      }
      if (!cover && hit) cover = hit;
    }
    // Covered where it is now (a sticky header over the top rows, a
    // floating button at the edge): centre it once and look again.
    if (!inside || opts.recentred) {
      // Already centred in this attempt.
    } else {
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      return prepare(found, { ...opts, recentred: true });
    }
    // The covering element is often a child of some fixed layer; name the
    // outermost element that is not an ancestor of the target, since that
    // is the one that has to go away.
    let named = cover;
    for (let e = cover; e && !ancestorOf(e, el); e = composedParent(e)) {
      const cs = getComputedStyle(e);
      if (cs.position === 'fixed' || cs.position === 'sticky' || cs.position === 'absolute') named = e;
    }
    return { ...fail('not_interactive', `${label} (${describe(el)}) is covered by ${describe(named)}`), retry: true };
  }

