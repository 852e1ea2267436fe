  // ---- icons inside text ----

  // No words inside: an icon font's glyph comes from CSS, an SVG's <title>
  // is a name, not text on the page.
  function textless(el, tag) {
    if (tag === 'svg') return !el.querySelector('text, foreignObject');
    if (tag !== 'img' && tag !== 'i' && el.firstElementChild) return false;
    return !/\S/.test(el.textContent || '');
  }

  // The words next to `el` in its parent (a few nodes each way), or ''
  // when it stands alone (an icon button's own picture, a toolbar: the
  // words of a neighbouring button or field are not a sentence).
  const NOT_PROSE = new Set([...SKIP, 'button', 'input', 'select', 'textarea']);
  function besideText(el) {
    const parts = [];
    for (const step of ['previousSibling', 'nextSibling']) {
      let n = el[step];
      for (let k = 0; n && k < 3; k++, n = n[step]) {
        const t = n.nodeType === 3 ? n.data : n.nodeType === 1 && !NOT_PROSE.has(n.localName) ? n.textContent || '' : '';
        if (/\S/.test(t)) { parts.push(t.slice(0, 200)); break; }
      }
    }
    return squeeze(parts.join(' '));
  }

  // How an icon in a sentence reads, `[icon: name]`, or '' when it needs
  // no words: alone (not in text), decorative by its author's word
  // (alt=""), or saying only what the words beside it say (a disk icon
  // before "disk").
  function iconToken(el, tag) {
    const near = besideText(el);
    if (!near) return '';
    if (tag === 'img' && el.getAttribute('alt') === '') return '';
    let name = squeeze(el.getAttribute('aria-label') || el.getAttribute('title') || '');
    if (!name) {
      const named = nameFor(el, tag);
      name = named ? named[1] : '';
    }
    return name && !saidBeside(name, near) ? `[icon: ${clip(name, 40)}]` : '';
  }

  const saidBeside = (name, near) => {
    const lower = near.toLowerCase();
    return name.toLowerCase().split(/\s+/).every((w) => lower.includes(w));
  };

  // A picture's alt text: what it stands for where it is drawn.
  const altText = (img) => squeeze(img.getAttribute('alt') || '');

  // How a picture with alt text reads: `[icon: True]` when small,
  // `[image: …]` when not; alone too (a yes / no column of icons), for its
  // alt text is the words it shows. Not when the words beside it say the
  // same.
  function pictureToken(img, alt, small) {
    const near = besideText(img);
    if (near && saidBeside(alt, near)) return '';
    return small ? `[icon: ${clip(alt, 40)}]` : `[image: ${clip(alt, 60)}]`;
  }

  // How read_page shows a field in the text: its value quoted exactly
  // (JSON escapes, so a trailing space or a line break shows), clipped at
  // VALUE_LIMIT with the rest counted. Passwords, check boxes and empty
  // fields add nothing.
  function fieldShown(el, tag) {
    if (tag === 'select') {
      const chosen = Array.from(el.selectedOptions || [], (o) => squeeze(o.textContent || '')).filter(Boolean);
      return chosen.length ? `[select: ${chosen.map((c) => JSON.stringify(c)).join(', ')}]` : '';
    }
    const type = tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : 'textarea';
    if (/^(password|hidden|checkbox|radio|file|submit|button|reset|image)$/.test(type) || !el.value) return '';
    const [head, left] = fieldValue(el.value);
    return `[${type === 'text' ? 'input' : type}: ${JSON.stringify(head)}${left ? ` (+${left} more characters)` : ''}]`;
  }

