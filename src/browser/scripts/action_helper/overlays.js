  // ---- overlays ----
  // One fixed layer in a closed shadow root: it never takes part in layout,
  // pointer-events:none lets every click through, and the page's CSS cannot
  // reach inside. Boxes follow their elements on scroll and resize.
  const overlays = (() => {
    let host = null, root = null, items = [], raf = 0;
    const place = () => {
      raf = 0;
      for (const it of items) {
        if (!it.el) continue;
        if (!it.el.isConnected) { it.node.style.display = 'none'; continue; }
        const b = topBox(it.el);
        it.position(it.node, b);
      }
    };
    const schedule = () => { if (!raf) raf = requestAnimationFrame(place); };
    function ensure() {
      if (host && host.isConnected) return;
      host = document.createElement('webagent-overlay');
      host.setAttribute('aria-hidden', 'true');
      host.style.cssText = 'all:initial;position:fixed;left:0;top:0;width:0;height:0;overflow:visible;pointer-events:none;z-index:2147483647;contain:layout style;';
      root = host.attachShadow({ mode: 'closed' });
      const style = document.createElement('style');
      style.textContent = '.o{position:fixed;pointer-events:none;box-sizing:border-box;font:12px/1.3 sans-serif}' +
        '.label{position:absolute;left:0;bottom:100%;background:#222;color:#fff;padding:1px 4px;border-radius:3px;white-space:nowrap}' +
        '.note{background:#fffbe6;color:#222;border:1px solid #e0c200;padding:2px 6px;border-radius:4px;max-width:320px}' +
        '.sub{left:50%;bottom:24px;transform:translateX(-50%);background:rgba(0,0,0,.78);color:#fff;padding:6px 14px;border-radius:6px;font-size:16px;max-width:80vw;text-align:center}';
      root.appendChild(style);
      document.documentElement.appendChild(host);
      addEventListener('scroll', schedule, { capture: true, passive: true });
      addEventListener('resize', schedule, { passive: true });
    }
    function box(el, css, position) {
      const node = document.createElement('div');
      node.className = 'o';
      node.style.cssText = css;
      root.appendChild(node);
      const it = { el, node, position };
      items.push(it);
      if (el) position(node, topBox(el));
      return node;
    }
    const around = (n, b) => { n.style.left = b.left + 'px'; n.style.top = b.top + 'px'; n.style.width = (b.right - b.left) + 'px'; n.style.height = (b.bottom - b.top) + 'px'; };
    const label = (node, text) => { if (!text) return; const l = document.createElement('div'); l.className = 'label'; l.textContent = text; node.appendChild(l); };
    function draw(el, args) {
      if (args.kind === 'clear') {
        const n = items.length;
        if (host) host.remove();
        removeEventListener('scroll', schedule, { capture: true });
        removeEventListener('resize', schedule);
        host = null; root = null; items = [];
        return { ok: true, removed: n };
      }
      if (el && !el.isConnected) return fail('not_found', 'the element is no longer in the page');
      if (el && !visible(el)) return fail('not_visible', `${describe(el)} is hidden, nothing to draw around`);
      ensure();
      const color = args.color;
      if (args.kind === 'highlight') {
        label(box(el, `background:${color || 'rgba(255,213,0,.35)'};`, around), args.label);
      } else if (args.kind === 'border') {
        label(box(el, `border:3px solid ${color || '#e53935'};`, around), args.label);
      } else if (args.kind === 'spotlight') {
        box(el, 'box-shadow:0 0 0 200vmax rgba(0,0,0,.55);border-radius:4px;', around);
      } else if (args.kind === 'inject') {
        const n = box(el, '', (node, b) => {
          node.style.left = b.left + 'px';
          if (args.position === 'before') { node.style.top = ''; node.style.bottom = (innerHeight - b.top + 4) + 'px'; }
          else { node.style.bottom = ''; node.style.top = (b.bottom + 4) + 'px'; }
        });
        n.classList.add('note');
        n.textContent = args.text;
      } else if (args.kind === 'subtitle') {
        for (const it of items) if (it.node.classList.contains('sub')) it.node.remove();
        items = items.filter((it) => !it.node.classList.contains('sub'));
        const n = box(null, '', () => {});
        n.classList.add('sub');
        n.textContent = args.text;
      }
      return { ok: true, overlays: items.length };
    }
    return { draw };
  })();

