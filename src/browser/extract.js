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
  // A field's value is shown whole, whitespace and all, up to this many
  // characters (src/dom/mod.rs FIELD_VALUE_LIMIT and the secrets' masked
  // forms mirror it).
  const VALUE_LIMIT = 2000;
  // A select's (or listbox's) options are listed up to this many; past it
  // the line counts the rest.
  const OPTION_LIMIT = 100;
  const OPTION_CHARS = 80;
  // Controls that repeat once per row say which row: its first words.
  const ROW_LEAD = 40;
  // A text-less inline box no larger than this inside a sentence is an
  // icon the text names.
  const ICON_PX = 40;
  // Before a document's first frame, stray fixed widgets are searched by
  // style in at most this many skipped elements (see walkStrayFixed).
  const STRAY_SCAN_LIMIT = 4000;

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

  // ---- names for elements that show no words ----
  //
  // An interactive element with no text and no naming attribute gets a name
  // from, in this order:
  //   1. what the browser's accessible name would use: aria-labelledby, an
  //      image's alt, an inner element's aria-label or title, an SVG <title>;
  //      for a form control without a label, the text of its row (nearest
  //      ancestor with short text and no other control) — shown as label="…";
  //   2. guesses — an SVG <use> reference, words of class / id / data-icon
  //      (self, then descendants) with framework noise dropped, a background
  //      or image file name — shown as name~="…" so the model can weigh them.
  const NAMED_BY = new Set(['aria-label', 'title', 'alt', 'placeholder', 'label']);
  const NOISE = new Set(['icon', 'icons', 'ico', 'fa', 'fas', 'far', 'fab', 'fal', 'fad', 'fa-solid', 'glyphicon',
    'glyphicons', 'material', 'symbols', 'outlined', 'rounded', 'sharp', 'filled', 'btn', 'button', 'svg', 'ql',
    'mdi', 'bi', 'ion', 'ionicon', 'ionicons', 'feather', 'lucide', 'octicon', 'ui', 'el', 'is', 'has', 'js',
    'active', 'selected', 'disabled', 'hidden', 'visible', 'show', 'open', 'small', 'large', 'lg', 'sm', 'md', 'xs',
    'xl', 'xxl', 'wrapper', 'wrap', 'container', 'inner', 'outer', 'item', 'col', 'flex', 'inline', 'block', 'primary',
    'secondary', 'default', 'light', 'dark', 'white', 'black', 'text', 'control', 'img', 'image', 'sprite', 'sprites',
    'action', 'actions', 'tool', 'toolbar', 'clickable', 'pointer', 'hover', 'focus', 'solid', 'regular', 'the',
    'and', 'with', 'fw', 'lg', 'pull', 'ms', 'me', 'mx', 'my', 'px', 'py', 'mt', 'mb', 'ml', 'mr', 'ng']);
  // Words a class or id token contributes; hashed or generated tokens
  // (css-1x2y3z, sc-bdVaJa, jsx-3141, _a1b2c) contribute none.
  function classWords(token) {
    if (!token || token.length > 40) return [];
    // Digits inside a token mean a hash, except a size suffix (icon-24).
    if (/\d/.test(token) && !/^[a-z]+([-_][a-z]+)*[-_]\d{1,3}$/i.test(token)) return [];
    // Random-looking case mixes (sc-bdVaJa) are generated too.
    if (/[a-z][A-Z][a-z]?[A-Z]/.test(token)) return [];
    const out = [];
    for (const part of token.replace(/([a-z])([A-Z])/g, '$1 $2').split(/[-_\s.:]+/)) {
      const w = part.toLowerCase();
      if (w.length < 3 || /\d/.test(w) || NOISE.has(w)) continue;
      out.push(w);
    }
    return out;
  }
  const WORD_DATA = ['data-icon', 'data-action', 'data-command', 'data-tooltip', 'data-title', 'data-original-title', 'data-tip', 'data-name'];
  function wordsOfElement(e) {
    const words = [];
    const cls = e.getAttribute('class');
    if (cls) for (const t of cls.split(/\s+/)) words.push(...classWords(t));
    const id = e.getAttribute('id');
    if (id) words.push(...classWords(id));
    // Most elements have no data- attribute at all: one look at the names
    // spares eight lookups.
    const names = e.getAttributeNames();
    let data = false;
    for (let i = 0; i < names.length && !data; i++) data = names[i].startsWith('data-');
    if (!data) return words;
    for (const a of WORD_DATA) {
      const v = e.getAttribute(a);
      if (v) words.push(...v.split(/[-_\s]+/).map((w) => w.toLowerCase()).filter((w) => w.length > 1 && !NOISE.has(w)));
    }
    return words;
  }
  const decoded = (s) => { try { return decodeURIComponent(s); } catch (_) { return s; } };
  // Words of a picture's file name (`icons/retweet.3f9a1c@2x.png`: retweet)
  // and of a sprite's fragment (`sprite.svg#retweet`).
  const fileWords = (url) => {
    const m = /([^/?#]*)(?:\?[^#]*)?(?:#(.*))?$/.exec(url || '');
    if (!m) return [];
    const words = [];
    const parts = decoded(m[1]).split('.');
    if (parts.length > 1 && /^[a-z0-9]{2,5}$/i.test(parts[parts.length - 1])) parts.pop();
    for (const part of parts) words.push(...classWords(part.replace(/@\d(\.\d+)?x$/i, '')));
    if (m[2]) words.push(...classWords(decoded(m[2])));
    return words;
  };
  // Words of the picture files a style draws: every url() in `content`,
  // background and mask images (data: URLs carry no name).
  function styleWords(cs, words) {
    urlWords(cs.content, words);
    urlWords(cs.backgroundImage, words);
    urlWords(cs.getPropertyValue('mask-image') || cs.getPropertyValue('-webkit-mask-image'), words);
  }
  function urlWords(value, words) {
    if (!value || value.indexOf('url(') < 0) return;
    const re = /url\(\s*["']?([^"')]+)/g;
    for (let m = re.exec(value); m; m = re.exec(value)) {
      if (!/^data:/i.test(m[1])) words.push(...fileWords(m[1]));
    }
  }
  // What CSS draws for an element: [words of the pictures of its own box
  // and its ::before / ::after boxes, text those boxes show]. Icon fonts'
  // private-use glyphs are no text.
  // Fields and images draw no ::before / ::after boxes.
  const NO_PSEUDO = new Set(['input', 'select', 'textarea', 'img', 'iframe', 'video', 'audio', 'canvas']);
  function drawn(el, cs) {
    const words = [];
    let text = '';
    styleWords(cs || getComputedStyle(el), words);
    if (NO_PSEUDO.has(el.localName)) return [words, text];
    for (const pseudo of ['::before', '::after']) {
      const ps = getComputedStyle(el, pseudo);
      const content = ps.content;
      // A pseudo box exists only with content.
      if (!content || content === 'none' || content === 'normal') continue;
      styleWords(ps, words);
      const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(content);
      if (quoted) {
        const shown = squeeze(quoted[1].replace(/\\(.)/g, '$1').replace(/[\uE000-\uF8FF]|[\uDB80-\uDBFF][\uDC00-\uDFFF]/g, ''));
        // Words, not a counter badge's digits or a decorative bullet.
        if (/\p{L}/u.test(shown)) text = squeeze(`${text} ${shown}`);
      }
    }
    return [words, text];
  }
  const textOfIds = (el, attr) => {
    const ids = el.getAttribute(attr);
    if (!ids) return '';
    const root = el.getRootNode();
    const parts = [];
    for (const id of ids.split(/\s+/)) {
      const ref = id && root.getElementById ? root.getElementById(id) : null;
      if (ref) parts.push(ref.getAttribute('aria-label') || ref.textContent || '');
    }
    return squeeze(parts.join(' '));
  };
  const CONTROL = 'input:not([type=hidden]),select,textarea,button';

  // [attribute, value] naming `el`, or null; `cs`: its computed style when
  // the caller has it.
  function nameFor(el, tag, cs) {
    let s = textOfIds(el, 'aria-labelledby');
    if (s) return ['label', clip(s, 60)];
    // Accessible-name sources inside the element.
    let seen = 0;
    const guesses = [];
    const inner = (node, depth) => {
      for (let c = node.firstElementChild; c && seen < 24; c = c.nextElementSibling) {
        seen += 1;
        const t = c.localName;
        if (t === 'img' || (t === 'input' && c.type === 'image')) {
          const alt = squeeze(c.getAttribute('alt') || c.getAttribute('title') || '');
          if (alt) return alt;
          guesses.push(...fileWords(c.getAttribute('src')));
        }
        const label = c.getAttribute('aria-label') || c.getAttribute('title');
        if (label && squeeze(label)) return squeeze(label);
        if (t === 'title' && c.parentNode && c.parentNode.localName === 'svg') {
          const st = squeeze(c.textContent || '');
          if (st) return st;
        }
        if (t === 'use') {
          const ref = c.getAttribute('href') || c.getAttribute('xlink:href') || '';
          guesses.push(...classWords(ref.replace(/^.*#/, '')));
        }
        if (depth < 3) {
          const r = inner(c, depth + 1);
          if (r) return r;
        }
        guesses.push(...wordsOfElement(c));
      }
      return '';
    };
    if (tag === 'img') {
      const alt = squeeze(el.getAttribute('alt') || '');
      if (alt) return ['label', clip(alt, 60)];
    }
    // (Most fields have no children: no walk.)
    s = el.firstElementChild ? inner(el, 0) : '';
    if (s) return ['label', clip(s, 60)];
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      s = textOfIds(el, 'aria-describedby') || rowText(el);
      if (s) return ['label', clip(s, 60)];
    }
    // Text CSS draws before or after the element is part of its name as a
    // browser computes it.
    const [pictures, cssText] = drawn(el, cs);
    if (cssText) return ['label', clip(cssText, 60)];
    // Guesses: own class/id first, then the pictures its style draws, then
    // what is inside (and the pictures drawn for the first few of those).
    const words = wordsOfElement(el).concat(pictures, guesses);
    if (tag === 'img') words.push(...fileWords(el.getAttribute('src')));
    for (let c = el.firstElementChild, k = 0; c && k < 4 && !words.length; c = c.nextElementSibling, k++) {
      words.push(...drawn(c)[0]);
    }
    const unique = [];
    for (const w of words) if (!unique.includes(w)) unique.push(w);
    if (unique.length) return ['name~', unique.slice(0, 3).join(' ')];
    return null;
  }

  // How many controls other than buttons `e` holds, counted once per
  // element and observation (`fieldCounts` is new for each).
  let fieldCounts = new Map();
  function fieldsIn(e) {
    let n = fieldCounts.get(e);
    // A box around nothing but one childless element (a table cell around
    // its field) holds that element alone: no search needed.
    const only = n === undefined ? e.firstElementChild : null;
    if (only && !only.nextElementSibling && !only.firstElementChild) {
      n = only.localName !== 'button' && only.matches(CONTROL) ? 1 : 0;
      fieldCounts.set(e, n);
    } else if (n === undefined) {
      n = 0;
      for (const c of e.querySelectorAll(CONTROL)) if (c.localName !== 'button') n += 1;
      fieldCounts.set(e, n);
    }
    return n;
  }

  // The words of the row a lone control sits in: the nearest ancestor (up
  // to four levels) with short text and no other control in it.
  function rowText(el) {
    const mine = el.localName !== 'button' && el.matches(CONTROL) ? 1 : 0;
    let e = composedParent(el);
    for (let depth = 0; e && depth < 4; depth++, e = composedParent(e)) {
      if (e.localName === 'form' || e.localName === 'body') return '';
      // Another control in it (buttons aside) means it is not this
      // control's row; a table's row holds many, and is counted once.
      // (`contains` stays in one tree: a control in a shadow root is not
      // among its host's ancestors' own.)
      if (fieldsIn(e) > (mine && e.contains(el) ? 1 : 0)) return '';
      // innerText lays text out; a long subtree is not a row anyway, and
      // one with no text has none to give.
      const raw = e.textContent || '';
      if (raw.length > 400) return '';
      if (!/\S/.test(raw)) continue;
      const words = squeeze(e.innerText || raw);
      if (words) return words.length <= 80 ? words : '';
    }
    return '';
  }

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

  // The name an icon in a sentence reads by, or '' when it needs none:
  // alone (not in text), decorative by its author's word (alt=""), or
  // saying only what the words beside it say (a disk icon before "disk").
  function iconName(el, tag) {
    const near = besideText(el);
    if (!near) return '';
    if (tag === 'img' && el.getAttribute('alt') === '') return '';
    let name = squeeze(el.getAttribute('aria-label') || el.getAttribute('title') || (tag === 'img' ? el.getAttribute('alt') || '' : ''));
    if (!name) {
      const named = nameFor(el, tag);
      name = named ? named[1] : '';
    }
    if (!name) return '';
    const lower = near.toLowerCase();
    if (name.toLowerCase().split(/\s+/).every((w) => lower.includes(w))) return '';
    return clip(name, 40);
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

  // ---- controls repeated once per row ----

  // Attributes that differ between rows without naming the control.
  const ROW_VARYING = new Set(['href', 'value', 'value+', 'checked', 'selected', 'aria-checked', 'aria-selected',
    'aria-pressed', 'aria-expanded', 'src', 'disabled', 'scrollable', 'readonly', 'required']);
  const lineKey = (item) => {
    let key = `${item.tag}\u0001${item.text || ''}`;
    const attrs = item.attrs;
    if (attrs) {
      for (let i = 0; i < attrs.length; i++) {
        if (!ROW_VARYING.has(attrs[i][0])) key += `\u0001${attrs[i][0]}=${attrs[i][1]}`;
      }
    }
    return key;
  };

  // Controls whose lines would read alike (a retweet per post, an Edit
  // per table row) get in="…": the first words of their row, the largest
  // ancestor that holds no other control of the same line. A row found
  // this way is structural: whatever repeats (list items, table rows,
  // cards), however the site names its classes. A control nested under a
  // listed element of its row that shows text is placed by that line.
  function tieToRows(lines) {
    const groups = new Map();
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const key = lineKey(line[1]);
      const group = groups.get(key);
      if (group) group.push(line); else groups.set(key, [line]);
    }
    for (const group of groups.values()) {
      if (group.length < 2) continue;
      const counts = new Map();
      const chains = group.map(([c]) => {
        const chain = [];
        for (let a = composedParent(c.el), d = 0; a && d < 12; a = composedParent(a), d++) {
          if (a.localName === 'body' || a.localName === 'html') break;
          chain.push(a);
          counts.set(a, (counts.get(a) || 0) + 1);
        }
        return chain;
      });
      // Links to one address do one thing wherever they sit (a section's
      // link in the sidebar and in its tabs): nothing to tell apart.
      const hrefs = new Set(group.map(([c]) => c.el.getAttribute('href')));
      if (hrefs.size === 1 && !hrefs.has(null)) continue;
      const rows = group.map((line, i) => {
        let row = null;
        for (const a of chains[i]) { if (counts.get(a) === 1) row = a; else break; }
        return row;
      });
      // A row is one of a kind's repeats (items of one list, rows of one
      // table, cards of one feed): a sibling of the same tag holds another
      // control of the group. Two unlike regions (a sidebar and the main
      // column) are not rows.
      const kin = new Map();
      for (const row of rows) {
        if (!row) continue;
        const key = row.parentNode;
        const tags = kin.get(key) || new Map();
        tags.set(row.localName, (tags.get(row.localName) || 0) + 1);
        kin.set(key, tags);
      }
      const found = group.map(([c, , parent], i) => {
        const row = rows[i];
        if (!row || kin.get(row.parentNode).get(row.localName) < 2) return '';
        if (parent && ancestorOf(row, parent.el) && elementsText(parent)) return '';
        return rowWords(row, c.el);
      });
      // Rows that start alike are told apart by more of their words.
      const leads = found.map((words) => lead(words, ROW_LEAD));
      group.forEach(([, item], i) => {
        if (!leads[i]) return;
        const twin = leads.some((l, j) => j !== i && l === leads[i]);
        (item.attrs || (item.attrs = [])).push(['in', twin ? lead(found[i], ROW_LEAD * 2) : leads[i]]);
      });
    }
  }
  const elementsText = (cand) => cand.text && squeeze(cand.text);

  // An ARIA listbox whose options are not all listed (scrolled out of its
  // box, or past the observed band) names the rest on its own line, so a
  // model knows they are there to scroll to.
  function unlistedOptions(lines) {
    let shown = null;
    for (let i = 0; i < lines.length; i++) {
      const c = lines[i][0], item = lines[i][1];
      if (item.text || !item.attrs) continue;
      let listbox = false;
      for (let j = 0; j < item.attrs.length && !listbox; j++) listbox = item.attrs[j][0] === 'role' && item.attrs[j][1] === 'listbox';
      if (!listbox) continue;
      const options = c.el.querySelectorAll('[role="option"]');
      if (!options.length) continue;
      if (!shown) shown = new Set(listed);
      const rest = Array.from(options).filter((o) => !shown.has(o));
      if (rest.length) item.text = `options not listed: ${optionList(rest, '')}`;
    }
  }

  // A row's words without the control's own.
  function rowWords(row, control) {
    const raw = row.textContent || '';
    // innerText lays text out as shown; the start of a very long row is
    // enough and is cheaper to take from the source.
    let words = squeeze(raw.length > 3000 ? raw.slice(0, 600) : row.innerText || raw);
    const own = squeeze(control.innerText || '');
    if (own) words = squeeze(words.replace(own, ' '));
    return words;
  }
  // The first words of `s` up to about n characters. A word is never cut
  // (a long first word is kept whole up to 2n, or nothing is said), so a
  // secret shown in a row is either whole, and masked, or left out.
  function lead(s, n) {
    if (s.length <= n) return s;
    let cut = s.lastIndexOf(' ', n);
    if (cut <= 0) cut = s.indexOf(' ');
    if (cut <= 0) return s.length <= 2 * n ? s : '';
    if (cut > 2 * n) return '';
    return `${s.slice(0, cut)}…`;
  }

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

  // Whether `a` is `b` or one of its ancestors across shadow roots and
  // same-origin frames.
  function ancestorOf(a, b) {
    for (let e = b; e; ) {
      if (e === a) return true;
      const up = composedParent(e);
      if (up) { e = up; continue; }
      const win = e.ownerDocument && e.ownerDocument.defaultView;
      e = win ? win.frameElement : null;
    }
    return false;
  }

  // The frame's content offset in its parent's coordinates.
  function frameOffset(f, cs) {
    const r = f.getBoundingClientRect();
    return { x: r.left + f.clientLeft + parseFloat(cs.paddingLeft || '0'),
      y: r.top + f.clientTop + parseFloat(cs.paddingTop || '0') };
  }

  // The topmost element at a point given in top-level viewport coordinates,
  // looking into open shadow roots and same-origin frames.
  function deepHit(x, y) {
    let doc = document, ox = 0, oy = 0;
    for (let guard = 0; guard < 16; guard++) {
      let h = doc.elementFromPoint(x - ox, y - oy);
      while (h && h.shadowRoot) {
        const inner = h.shadowRoot.elementFromPoint(x - ox, y - oy);
        if (!inner || inner === h) break;
        h = inner;
      }
      if (!h || h.localName !== 'iframe') return h;
      let d = null;
      try { d = h.contentDocument; } catch (_) { d = null; }
      if (!d) return h;
      const off = frameOffset(h, getComputedStyle(h));
      ox += off.x; oy += off.y; doc = d;
    }
    return null;
  }

  function observe(opts) {
    labelsByRoot = new Map();
    fieldCounts = new Map();
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
    let lastChar = '\n';
    const addText = (s) => {
      if (s[0] === ' ' && (lastChar === ' ' || lastChar === '\n')) s = s.slice(1);
      if (!s) return;
      textSeen += s.length;
      if (textLen >= textLimit) { if (s.trim()) textCut = true; return; }
      if (textLen + s.length > textLimit) { s = s.slice(0, textLimit - textLen); textCut = true; }
      text.push(s); textLen += s.length; lastChar = s[s.length - 1];
    };
    const addBreak = (spaceOnly) => {
      if (lastChar === '\n') return;
      if (spaceOnly) { addText(' '); return; }
      if (lastChar === ' ') { const t = text.pop(); text.push(t.slice(0, -1)); textLen -= 1; }
      text.push('\n'); textLen += 1; lastChar = '\n';
    };
    const ownerSpace = (o) => { if (o && o.text && !o.text.endsWith(' ')) o.text += ' '; };

    // An element's box in top-level coordinates, and whether it has any
    // size at all.
    function boxOf(el, frame) {
      const r = el.getBoundingClientRect();
      return { left: r.left + frame.ox, top: r.top + frame.oy, right: r.right + frame.ox,
        bottom: r.bottom + frame.oy, sized: r.width > 0 || r.height > 0 };
    }
    // Outside the band only the box is read: no styles, no descent.
    function outsideBand(box) {
      if (!box.sized || (box.bottom >= band.top && box.top <= band.bottom && box.right >= band.left && box.left <= band.right)) return false;
      // Boxes beside the band (skip links parked at -9999px) are out of
      // reach by scrolling up or down; they are not "below".
      if (box.bottom < band.top) skippedAbove += 1;
      else if (box.top > band.bottom) skippedBelow += 1;
      return true;
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
        if (outsideBand(box)) { keepSkipped(el, frame, inShadow); return; }
      }
      if (walked) walked.add(el);
      const cs = getComputedStyle(el);
      const disp = cs.display;
      if (disp === 'none') return;
      // Restyled as something other than a cell, it may sit anywhere.
      if (cellOfRowInside && disp !== 'table-cell') {
        box = boxOf(el, frame);
        if (outsideBand(box)) { keepSkipped(el, frame, inShadow); return; }
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
        if (outsideBand(box)) { keepSkipped(el, frame, inShadow); return; }
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
          positioned: myPositioned, text: '', crossOrigin: false, covered: false };
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
      // the name the listing would give it (a guess unless it has a label).
      let icon = '';
      if (iconQuiet === 0 && visible && disp.startsWith('inline') && tag !== 'br' && tag !== 'wbr' && textless(el, tag)) {
        if (box === null) box = boxOf(el, frame);
        const w = box.right - box.left, h = box.bottom - box.top;
        if (w >= 4 && h >= 4 && w <= ICON_PX && h <= ICON_PX) icon = iconName(el, tag);
      }
      if (icon) {
        const token = `[icon: ${icon}]`;
        if (lastChar !== ' ' && lastChar !== '\n') addText(' ');
        addText(`${token} `);
        if (owner && owner.text.length < TEXT_PER_ELEMENT) {
          owner.text = `${owner.text}${owner.text && !owner.text.endsWith(' ') ? ' ' : ''}${token} `;
        }
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
      for (let c = el.firstChild; c; c = c.nextSibling) {
        // Text directly in a hidden element (visibility, closed <details>)
        // is not readable; its element children decide for themselves.
        if (c.nodeType === 3 && !visible) continue;
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
        if (owner && owner.text.length < TEXT_PER_ELEMENT && owner.tag !== 'select') {
          const t = owner.text && !owner.text.endsWith(' ') ? s : s.replace(/^ /, '');
          owner.text = (owner.text + t).slice(0, TEXT_PER_ELEMENT + 1);
        }
      }
    }

    const rootFrame = { doc: topDoc, ox: 0, oy: 0, view: viewport, cand: null,
      clicky: withListeners ? clickTargets(topDoc) : null };
    const start = topDoc.body || topDoc.documentElement;
    if (start) walk(start, rootFrame, null, false, false, EVERYWHERE, false);
    if (reading) return { text: text.join('').trim(), clipped: textCut, chars: textSeen };
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
      const words = c.whole ? c.text : c.text ? clip(squeeze(c.text), TEXT_PER_ELEMENT) : '';
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
      text: text.join('').trim(),
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

  // Installed as a document starts (Page.addScriptToEvaluateOnNewDocument):
  // once the DOM is parsed, take one unreported observation, so the style
  // and layout the first real one needs are done, and its code is warm,
  // while the page still waits for its images and scripts. Only in that
  // idle time: run before a load that is due anyway, it would hold the
  // load event back by as long as it takes (a table of 2,000 fields did
  // 60-100 ms), which is the very wait it is meant to hide; when the load
  // comes first, the first real observation does the work. The warm-up
  // leaves no trace: numbering and "new" marks start from the first
  // observation webagent asks for.
  if (document.readyState === 'loading' && window === window.top && typeof requestIdleCallback === 'function') {
    document.addEventListener('DOMContentLoaded', () => {
      const idle = requestIdleCallback(() => {
        if (document.readyState === 'complete') return;
        try { observe({}); } catch (_) { /* the real observation reports errors */ }
        sequence = 0;
        listed = [];
        previousIds = null;
      });
      addEventListener('load', () => cancelIdleCallback(idle), { once: true });
    }, { once: true });
  }

  // `a >>> b >>> c`: each hop but the last enters the document of the
  // <iframe> it matches (first visible match) or the open shadow root of
  // the element it matches. Returns { root, last } for the last part, or
  // { cross, prefix, rest } when a hop reaches a frame of another origin
  // (its element is kept for `hopped()`), or { error, detail }.
  let hoppedFrame = null;
  function pierce(selector) {
    const parts = selector.split('>>>').map((p) => p.trim());
    let root = document;
    for (let i = 0; i < parts.length - 1; i++) {
      let matches;
      try { matches = Array.from(root.querySelectorAll(parts[i])); }
      catch (e) { return { error: 'selector', detail: String(e.message || e) }; }
      if (!matches.length) return { error: 'missing', detail: `no element matches \`${parts[i]}\`` };
      const host = matches.find((m) => m.checkVisibility()) || matches[0];
      if (host.localName === 'iframe' || host.localName === 'frame') {
        let doc = null;
        try { doc = host.contentDocument; } catch (_) { doc = null; }
        if (!doc) {
          hoppedFrame = host;
          return { cross: true, prefix: parts.slice(0, i + 1).join(' >>> '), rest: parts.slice(i + 1).join(' >>> ') };
        }
        root = doc;
      } else if (host.shadowRoot) {
        root = host.shadowRoot;
      } else {
        return { error: 'selector', detail: `\`${parts[i]}\` matches a <${host.localName}> with neither a document nor an open shadow root to enter` };
      }
    }
    return { root, last: parts[parts.length - 1] };
  }

  globalThis.__webagentObserver = {
    observe: (opts) => observe(opts || {}),
    // The whole page's text as read_page gives it: what observations read,
    // plus the values of fields; {text, clipped, chars}.
    read: (limit) => observe({ read: true, textLimit: limit }),
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
      const p = pierce(selector);
      if (p.error) return JSON.stringify({ ok: false, error: 'selector', detail: p.detail });
      if (p.cross) return JSON.stringify({ ok: false, error: 'selector', detail: `\`${p.prefix}\` is a frame of another origin; an action's selector reaches into it` });
      let matches;
      try { matches = Array.from(p.root.querySelectorAll(p.last)); }
      catch (e) { return JSON.stringify({ ok: false, error: 'selector', detail: String(e.message || e) }); }
      const value = fn(matches, args, { topRect, composedParent });
      return JSON.stringify({ ok: true, value: value === undefined ? null : value });
    },
    sequence: () => sequence,
    pierce,
    // The <iframe> of another origin the last `pierce` stopped at.
    hopped: () => hoppedFrame,
    // The element itself (for the CDP calls that need a node handle).
    element(seq, index) {
      const found = resolve(seq, index);
      return found.el || null;
    },
  };
  return 'installed';
})()
