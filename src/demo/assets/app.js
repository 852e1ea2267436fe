// Acme admin: the little behaviour the pages have. Everything also works
// without this script (the server asks for confirmation itself), so agents
// that post forms directly see the same rules.
(function () {
  // Filter the orders table as the person types; the server-side filter
  // still applies when the form is submitted.
  var search = document.getElementById('order-search');
  var rows = document.querySelectorAll('[data-order-row]');
  var count = document.getElementById('order-count');
  if (search && rows.length) {
    search.addEventListener('input', function () {
      var needle = search.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (row) {
        var match = !needle || row.getAttribute('data-search').indexOf(needle) !== -1;
        row.hidden = !match;
        if (match) shown++;
      });
      if (count) count.textContent = shown + (shown === 1 ? ' order' : ' orders');
    });
  }

  // Changing the status select applies the filter at once.
  var status = document.getElementById('status-filter');
  if (status && status.form) {
    status.addEventListener('change', function () { status.form.submit(); });
  }

  // Destructive forms carry data-confirm; ask in an in-page dialog rather
  // than window.confirm, which automation often cannot see.
  var backdrop = document.getElementById('confirm-modal');
  if (!backdrop) return;
  var message = document.getElementById('confirm-message');
  var title = document.getElementById('confirm-title');
  var yes = document.getElementById('confirm-yes');
  var no = document.getElementById('confirm-cancel');
  var pending = null;
  function close() {
    backdrop.classList.remove('open');
    backdrop.setAttribute('aria-hidden', 'true');
    pending = null;
  }
  document.querySelectorAll('form[data-confirm]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      var confirmed = form.querySelector('input[name=confirm]');
      if (confirmed && confirmed.value === 'yes') return;
      event.preventDefault();
      pending = form;
      title.textContent = form.getAttribute('data-confirm-title') || 'Are you sure?';
      message.textContent = form.getAttribute('data-confirm');
      yes.textContent = form.getAttribute('data-confirm-yes') || 'Confirm';
      backdrop.classList.add('open');
      backdrop.setAttribute('aria-hidden', 'false');
      yes.focus();
    });
  });
  yes.addEventListener('click', function () {
    if (!pending) return;
    var form = pending;
    var confirmed = form.querySelector('input[name=confirm]');
    if (confirmed) confirmed.value = 'yes';
    close();
    form.submit();
  });
  no.addEventListener('click', close);
  backdrop.addEventListener('click', function (event) { if (event.target === backdrop) close(); });
  document.addEventListener('keydown', function (event) { if (event.key === 'Escape') close(); });
})();
