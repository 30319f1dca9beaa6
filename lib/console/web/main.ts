import './style.css';
import { deadLettersView } from './dead-letters.js';
import { h } from './dom.js';
import { itemsView } from './items.js';
import { runView } from './run.js';
import { runsView } from './runs.js';

/**
 * The console's router: the view is in the URL's hash (`#/runs`, `#/run/<source>/<run>`,
 * `#/dead-letters?source=…`, `#/items?source=…&id=…`), so every view can be linked, reloaded
 * and reached with the back button, and the server serves one page.
 */

let stop: (() => void) | undefined;

async function route(): Promise<void> {
  stop?.();
  stop = undefined;
  const main = document.getElementById('main')!;
  const [where = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?', 2);
  const parts = where.split('/').map(decodeURIComponent);
  const params = new URLSearchParams(query);
  for (const a of document.querySelectorAll('nav a'))
    a.toggleAttribute(
      'aria-current',
      (a.getAttribute('href') ?? '').slice(2) === (parts[0] === 'run' ? 'runs' : parts[0]),
    );
  try {
    if (parts[0] === 'run' && parts[1] && parts[2]) stop = runView(main, parts[1], parts[2]);
    else if (parts[0] === 'dead-letters') await deadLettersView(main, params);
    else if (parts[0] === 'items') await itemsView(main, params);
    else stop = runsView(main);
  } catch (error) {
    main.replaceChildren(h('h1', {}, 'Something failed'), h('p', { role: 'alert' }, String(error)));
  }
}

window.addEventListener('hashchange', () => void route());
void route();
