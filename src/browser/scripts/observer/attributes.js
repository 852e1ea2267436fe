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

  const KEPT_RANK = new Map(KEPT.map((name, i) => [name, i]));
  const FORM_TAGS = new Set(['button', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset']);

  // A field's first label (what `el.labels[0]` gives), from one pass over
  // the labels of its document or shadow root per observation. Chromium
  // answers a field's first `labels` by searching its whole tree for
  // labels that point at it, so a table of 2,000 fields asked one by one
  // took 200 ms and more; the pass is as long as the labels are few.
  let labelsByRoot = new Map();
  function firstLabel(el) {
    const root = el.getRootNode();
    let labels = labelsByRoot.get(root);
    if (!labels) {
      labels = new Map();
      if (root.querySelectorAll) {
        for (const label of root.querySelectorAll('label')) {
          const control = label.control;
          if (control && !labels.has(control)) labels.set(control, label);
        }
      }
      labelsByRoot.set(root, labels);
    }
    return labels.get(el) || null;
  }

  function attributesOf(el, tag) {
    const out = [];
    // Walking the element's own (usually few) attribute names is much
    // cheaper than asking for each kept name, and unlike `el.attributes`
    // it makes no Attr node per attribute (a document's first
    // observation paid for each one).
    const names = el.getAttributeNames();
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const rank = KEPT_RANK.get(name);
      if (rank === undefined) continue;
      const value = el.getAttribute(name);
      if (name === 'role' && value === tag) continue;
      out.push([rank, name, clip(squeeze(value), name === 'href' ? 80 : 60)]);
    }
    out.sort((x, y) => x[0] - y[0]);
    for (let i = 0; i < out.length; i++) out[i] = [out[i][1], out[i][2]];
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (type === 'checkbox' || type === 'radio') {
        if (el.checked) out.push(['checked', '']);
      } else if (type === 'password') {
        if (el.value) out.push(['value', '•'.repeat(Math.min(8, el.value.length))]);
      } else if (tag === 'select') {
        // Every chosen option of a multiple select, not only the first.
        const chosen = [];
        for (const o of el.selectedOptions || []) chosen.push(clip(squeeze(o.textContent || ''), 60));
        if (chosen.length) out.push(['value', clip(chosen.join(' | '), 200)]);
      } else if (el.value) {
        // Exact, not squeezed: a model copying a value needs its spaces.
        const [head, left] = fieldValue(el.value);
        out.push(['value', head]);
        if (left) out.push(['value+', String(left)]);
      }
    }
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      const label = firstLabel(el);
      const words = label && labelText(label, el);
      if (words) out.push(['label', clip(words, 60)]);
    }
    if (tag === 'option' && el.selected) out.push(['selected', '']);
    if (FORM_TAGS.has(tag) && el.matches(':disabled')) out.push(['disabled', '']);
    return out;
  }

  // A field's value up to VALUE_LIMIT characters (code points, as Rust
  // counts them, so a masked secret's clipped form matches) and how many
  // characters are left past it.
  function fieldValue(v) {
    if (v.length <= VALUE_LIMIT) return [v, 0];
    const points = Array.from(v);
    if (points.length <= VALUE_LIMIT) return [v, 0];
    return [points.slice(0, VALUE_LIMIT).join(''), points.length - VALUE_LIMIT];
  }

  // The names of a select's options, OPTION_LIMIT at most, with how many
  // more there are.
  function optionList(options, note) {
    const names = [];
    let total = 0;
    for (const o of options) {
      const name = clip(squeeze(o.textContent || ''), OPTION_CHARS);
      if (!name) continue;
      total += 1;
      if (names.length < OPTION_LIMIT) names.push(name);
    }
    const more = total - names.length;
    return names.join(' | ') + (more ? ` (+${more} more${note})` : '');
  }

  // A label's own words, without the text of the control inside it (a
  // select's options, a textarea's content).
  function labelText(label, control) {
    const parts = [];
    const collect = (node) => {
      for (let c = node.firstChild; c; c = c.nextSibling) {
        if (c === control) continue;
        if (c.nodeType === 3) parts.push(c.data);
        else if (c.nodeType === 1 && !SKIP.has(c.localName) && c.localName !== 'select' && c.localName !== 'textarea') collect(c);
      }
    };
    collect(label);
    return squeeze(parts.join(' '));
  }

