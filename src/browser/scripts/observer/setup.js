// webagent's page observer. It is installed into an isolated world that
// webagent creates for each document, so the page's own scripts can neither
// see this state nor replace the DOM functions it calls.
//
// observe(opts) walks the flat tree (light DOM, open shadow roots, same-origin
// iframes) once and returns ONE JSON string: a single Runtime.evaluate round
// trip, no per-node CDP traffic. Outside the viewport plus a margin, a subtree
// whose box lies entirely outside that band, content and all, is skipped
// without reading its styles, so the default observation costs what the
// visible part costs.
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
  // Words clipped at a space, not inside a word: half a token reads as
  // another one (`assert_eq!(vec1, ve…`).
  const clipWords = (s, n) => {
    if (s.length <= n) return s;
    const cut = s.lastIndexOf(' ', n - 1);
    return `${s.slice(0, cut >= n / 2 ? cut : n - 1)}…`;
  };

  // How text styled with `cs` keeps its line breaks: 0 it folds them
  // (normal text), 1 it keeps them (pre-line), 2 it keeps them and its
  // spaces (pre, pre-wrap, break-spaces: code).
  const keptLines = (cs) => {
    const collapse = cs.whiteSpaceCollapse;
    if (collapse === 'preserve' || collapse === 'break-spaces') return 2;
    return collapse === 'preserve-breaks' ? 1 : 0;
  };

