// Recording and finding elements again for recipes.
//
// One function, run in webagent's isolated world: with `args.record` it
// returns the facts that find `subject` (an element, or the first of a
// list) again: tag, id, data-testid, role, accessible name, label,
// placeholder, name, visible text, a CSS path and the page's URL. With
// `args.locators` (a recipe step's list, strongest first) it returns the
// one element they name, as a CSS path that names exactly it now, or why
// there is none, and what it shows now (visible, text, value, checked)
// for a recipe's assertions.
//
// Agreement: every locator is tried. Those that name exactly one element
// must name the same one (or one inside the other: a label and its field,
// a button and its text); when they disagree the step is ambiguous. The
// CSS path is the last resort: it counts only when nothing else named one
// element, since a moved element leaves its old path to another.
//
// Depth: elements inside open shadow roots and same-origin frames are
// recorded and found like any other. Their CSS path crosses each boundary
// with `>>>` (the hop the actions' selectors take), and the other locators
// search every open root and reachable frame document. A frame of another
// origin is out of reach here: with `args.frames` the answer lists the CSS
// paths of those met (`frames`), for webagent to look in each in turn.
(subject, args) => {
  const norm = (s) => String(s || '').replace(/\s+/g, ' ').trim();
  const fold = (s) => norm(s).toLowerCase();
  const attr = (el, n) => { const v = el.getAttribute(n); return v && v.trim() ? v.trim() : null; };
  const tagOf = (el) => el.localName || '';
  const typeOf = (el) => (el.getAttribute('type') || '').toLowerCase();
  const isField = (el) => ['input', 'textarea', 'select'].includes(tagOf(el));
  const isButtonish = (el) => tagOf(el) === 'input' && ['button', 'submit', 'reset', 'image'].includes(typeOf(el));
  const IMPLICIT = {
    a: 'link', button: 'button', select: 'combobox', textarea: 'textbox', summary: 'button',
    option: 'option', img: 'img', h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading',
    h5: 'heading', h6: 'heading', nav: 'navigation', form: 'form', dialog: 'dialog',
  };
  function roleOf(el) {
    const explicit = attr(el, 'role');
    if (explicit) return explicit.split(/\s+/)[0];
    const tag = tagOf(el);
    if (tag === 'a' && !el.hasAttribute('href')) return null;
    if (tag === 'input') {
      const t = typeOf(el);
      if (isButtonish(el)) return 'button';
      if (t === 'checkbox') return 'checkbox';
      if (t === 'radio') return 'radio';
      if (t === 'range') return 'slider';
      if (t === 'hidden') return null;
      if (t === 'number') return 'spinbutton';
      if (t === 'search') return 'searchbox';
      return 'textbox';
    }
    return IMPLICIT[tag] || null;
  }
  // A field's first label, as `el.labels[0]` gives it but without the
  // search of the whole document Chromium makes for `labels` (a tenth of
  // a millisecond on a form of 500 fields, at every click the recorder
  // sees): only a label that wraps the field or names its id can be one.
  function firstLabel(el) {
    if (!('labels' in el)) return null;
    const root = el.getRootNode();
    let first = null;
    const consider = (label) => {
      if (!label || label.control !== el) return;
      if (!first || (label.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING)) first = label;
    };
    if (el.id && root.querySelectorAll) {
      for (const label of root.querySelectorAll('label[for="' + CSS.escape(el.id) + '"]')) consider(label);
    }
    consider(el.closest('label'));
    return first;
  }
  function labelOf(el) {
    const label = firstLabel(el);
    if (label) {
      // The label's own words, without the text of the field inside it.
      const copy = label.cloneNode(true);
      copy.querySelectorAll('input, select, textarea').forEach((f) => f.remove());
      const text = norm(copy.textContent);
      if (text) return text;
    }
    const by = attr(el, 'aria-labelledby');
    if (by) {
      const text = norm(by.split(/\s+/).map((id) => {
        const root = el.getRootNode();
        const ref = root.getElementById ? root.getElementById(id) : document.getElementById(id);
        return ref ? ref.textContent : '';
      }).join(' '));
      if (text) return text;
    }
    return null;
  }
  function ownText(el) {
    if (isButtonish(el)) return norm(el.value || el.getAttribute('alt') || '');
    if (isField(el)) return '';
    return norm(el.innerText !== undefined ? el.innerText : el.textContent).slice(0, 80);
  }
  function nameOf(el) {
    const aria = attr(el, 'aria-label');
    if (aria) return norm(aria);
    const label = labelOf(el);
    if (label) return label;
    if (isField(el)) return norm(attr(el, 'title') || attr(el, 'placeholder') || '');
    if (tagOf(el) === 'img') return norm(attr(el, 'alt') || '');
    const text = ownText(el);
    if (text) return text;
    return norm(attr(el, 'title') || '');
  }
  const simpleIdent = (s) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s);
  function uniqueId(el) {
    return el.id && simpleIdent(el.id) && el.getRootNode().querySelectorAll('#' + el.id).length === 1;
  }
  // A CSS path in the grammar actions accept (tags, #id, :nth-child), from
  // the nearest ancestor with a unique id. An element in a shadow root or
  // a same-origin frame is reached from its host or <iframe> with `>>>`.
  function cssPath(el) {
    const root = el.getRootNode();
    let outer = null;
    if (root instanceof ShadowRoot) outer = root.host;
    else if (root.defaultView) {
      try { outer = root.defaultView.frameElement; } catch (_) { outer = null; }
    }
    const within = pathWithin(el, root);
    return outer ? cssPath(outer) + ' >>> ' + within : within;
  }
  function pathWithin(el, root) {
    if (uniqueId(el)) return '#' + el.id;
    const parts = [];
    let node = el;
    const top = root.documentElement || null;
    while (node && node.nodeType === 1 && node !== top) {
      if (node !== el && uniqueId(node)) { parts.unshift('#' + node.id); break; }
      let part = tagOf(node);
      // A shadow root's own children have a root, not an element, above.
      const parent = node.parentElement || node.parentNode;
      // Counted by walking back: a parent's `children`, asked for its
      // length and searched, is rebuilt after each change to the page,
      // which on a form of 500 rows was a third of a recorded click's time.
      let place = 1;
      for (let s = node.previousElementSibling; s; s = s.previousElementSibling) place++;
      if (parent && (place > 1 || node.nextElementSibling)) part += ':nth-child(' + place + ')';
      parts.unshift(part);
      node = node.parentElement;
    }
    return parts.join(' > ');
  }
  function describe(el) {
    const tag = tagOf(el);
    let out = '<' + tag;
    if (el.id) out += ' id=' + el.id;
    for (const n of ['data-testid', 'name', 'type', 'placeholder', 'aria-label', 'role']) {
      const v = attr(el, n);
      if (v) out += ' ' + n + '=' + JSON.stringify(v.slice(0, 40));
    }
    const label = isField(el) ? labelOf(el) : null;
    if (label) out += ' label=' + JSON.stringify(label.slice(0, 40));
    const text = ownText(el).slice(0, 40);
    return out + (text ? '>' + text + '</' + tag + '>' : ' />');
  }
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';

  // The page a step runs on is the tab's: a frame's own address is no
  // place a replay can check (a frame of another origin keeps its own).
  function pageUrl() {
    try { return window.top.location.href; } catch (_) { return location.href; }
  }
  if (args.record) {
    const el = Array.isArray(subject) ? subject[0] : subject;
    if (!el) return null;
    const out = {
      tag: tagOf(el), id: el.id || null, testid: attr(el, 'data-testid'), name: attr(el, 'name'),
      ariaLabel: attr(el, 'aria-label'), placeholder: attr(el, 'placeholder'), role: roleOf(el),
      accessibleName: nameOf(el) || null, label: isField(el) ? labelOf(el) : null,
      text: ownText(el) || null, css: cssPath(el), url: pageUrl(),
    };
    return out;
  }

  // Controls a text locator may name: the innermost of these whose words
  // are the text.
  const CONTROL = 'a, button, input, select, textarea, summary, label, option, [role], [onclick], [tabindex], [contenteditable]';
  // Every element matching `selector` in the document, its open shadow
  // roots and its same-origin frames, in document order per root. The
  // frames of another origin met on the way are kept in `far`.
  const far = [];
  function deep(selector) {
    const out = [];
    const visit = (root) => {
      for (const e of root.querySelectorAll('*')) {
        if (e.matches(selector)) out.push(e);
        if (e.shadowRoot) visit(e.shadowRoot);
        if (e.localName === 'iframe' || e.localName === 'frame') {
          let doc = null;
          try { doc = e.contentDocument; } catch (_) { doc = null; }
          if (doc) visit(doc);
          else if (!far.includes(e)) far.push(e);
        }
      }
    };
    visit(document);
    return out;
  }
  // A CSS locator, across `>>>` hops when the page has the observer's.
  function css(selector) {
    const observer = globalThis.__webagentObserver;
    if (!selector.includes('>>>') || !observer) return Array.from(document.querySelectorAll(selector));
    const p = observer.pierce(selector);
    if (p.error === 'missing' || p.cross) return [];
    if (p.error) throw new Error(p.detail);
    return Array.from(p.root.querySelectorAll(p.last));
  }
  // The one element the locators name, or why there is none.
  function find() {
    const all = deep('*');
    function named(loc) {
      const v = loc.value;
      switch (loc.kind) {
        case 'testid': return all.filter((e) => e.getAttribute('data-testid') === v);
        case 'id': return all.filter((e) => e.id === v);
        case 'role': {
          const want = fold(loc.name);
          return all.filter((e) => roleOf(e) === loc.role && fold(nameOf(e)) === want);
        }
        case 'label': {
          const want = fold(v);
          return all.filter((e) => (isField(e) || attr(e, 'contenteditable')) && fold(labelOf(e)) === want);
        }
        case 'placeholder': return all.filter((e) => norm(e.getAttribute('placeholder')) === norm(v));
        case 'name': return all.filter((e) => e.getAttribute('name') === v);
        case 'text': {
          const want = fold(v);
          const hits = deep(CONTROL).filter((e) => fold(ownText(e)) === want);
          return hits.filter((e) => !hits.some((o) => o !== e && e.contains(o)));
        }
        case 'css': return css(v);
        default: throw new Error('unknown locator kind ' + loc.kind);
      }
    }
    const written = (loc) => loc.kind === 'role' ? 'role:' + loc.role + ':' + loc.name : loc.kind + ':' + loc.value;
    const same = (a, b) => a === b || a.contains(b) || b.contains(a);
    const tried = [];
    const found = [];
    for (const loc of args.locators) {
      let hits;
      try { hits = named(loc); } catch (e) {
        tried.push({ locator: written(loc), matches: 0, error: String(e.message || e) });
        found.push([]);
        continue;
      }
      const shown = hits.filter(visible);
      if (shown.length) hits = shown;
      found.push(hits);
      tried.push({ locator: written(loc), matches: hits.length, element: hits.length === 1 ? describe(hits[0]) : undefined });
    }
    const strong = [];
    args.locators.forEach((loc, i) => {
      if (loc.kind !== 'css' && found[i].length === 1) strong.push(i);
    });
    const page = () => {
      const wanted = args.locators.find((l) => l.kind === 'role');
      const pool = Array.from(document.querySelectorAll(CONTROL)).filter(visible)
        .filter((e) => !wanted || roleOf(e) === wanted.role);
      const shown = pool.slice(0, 8).map(describe);
      return location.href + ' (' + norm(document.title) + ')' + (shown.length ? '; ' + (wanted ? 'elements with role ' + wanted.role : 'controls') + ': ' + shown.join(', ') : '');
    };
    let chosen = null;
    let matched = -1;
    if (strong.length) {
      const first = found[strong[0]][0];
      const against = strong.find((i) => !same(found[i][0], first));
      if (against !== undefined) {
        return {
          error: 'ambiguous', tried, page: page(),
          detail: written(args.locators[strong[0]]) + ' names ' + describe(first) + ' but ' +
            written(args.locators[against]) + ' names ' + describe(found[against][0]),
        };
      }
      chosen = first;
      matched = strong[0];
    } else {
      const several = args.locators.findIndex((l, i) => l.kind !== 'css' && found[i].length > 1);
      const css = args.locators.findIndex((l, i) => l.kind === 'css' && found[i].length === 1);
      if (css >= 0 && (several < 0 || found[several].some((e) => same(e, found[css][0])))) {
        chosen = found[css][0];
        matched = css;
      } else if (several >= 0) {
        return {
          error: 'ambiguous', tried, page: page(),
          detail: written(args.locators[several]) + ' names ' + found[several].length + ' elements and nothing tells them apart',
        };
      } else {
        return { error: 'not_found', tried, page: page(), detail: 'no recorded locator names an element on this page' };
      }
    }
    // What the element shows, for a recipe's assertions to compare.
    function stateOf(el) {
      const kind = typeOf(el);
      const checkable = tagOf(el) === 'input' && (kind === 'checkbox' || kind === 'radio');
      const aria = attr(el, 'aria-checked');
      let text = '';
      if (isButtonish(el)) text = norm(el.value || el.getAttribute('alt') || '');
      else if (!isField(el)) text = norm(el.innerText !== undefined ? el.innerText : el.textContent).slice(0, 2000);
      return {
        visible: visible(el), text,
        value: isField(el) && !isButtonish(el) ? String(el.value) : null,
        checked: checkable ? el.checked : (aria === 'true' ? true : aria === 'false' ? false : null),
      };
    }
    return { selector: cssPath(chosen), matched: written(args.locators[matched]), element: describe(chosen), tried, state: stateOf(chosen) };
  }
  const answer = find();
  if (args.frames) answer.frames = far.filter(visible).map(cssPath);
  return answer;
}
