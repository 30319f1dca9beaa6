/**
 * The console's few DOM helpers: build elements, format figures, and swap a region that a poll
 * redraws without taking the keyboard focus away from whoever is using it.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | boolean | number | EventListener | undefined>;

/** `h('button', { type: 'button', onclick }, 'Cancel')`: an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  for (const child of children)
    if (child !== null && child !== undefined && child !== false)
      el.append(typeof child === 'object' ? child : String(child));
  return el;
}

/** A `#/…` link. */
export function link(href: string, label: string): HTMLAnchorElement {
  return h('a', { href }, label);
}

/**
 * Replaces the children of `region`, then gives the focus back to the element with the same
 * `data-key` if one had it: a poll every two seconds must not pull a button from under the keyboard.
 */
export function redraw(region: HTMLElement, ...children: Child[]): void {
  const active = document.activeElement as HTMLElement | null;
  const key = active && region.contains(active) ? active.dataset.key : undefined;
  region.replaceChildren(
    ...children
      .filter((c): c is Node | string => c !== null && c !== undefined && c !== false)
      .map((c) => (typeof c === 'object' ? c : String(c))),
  );
  if (key) region.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`)?.focus();
}

/** `12s`, `3m 4s`, `2h 5m`: a heartbeat's age. */
export function age(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
}

/** A time as the reader's local time, with the ISO form as its tooltip. */
export function when(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '—';
  return h('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString());
}

/** A labelled form control: `<label>Reason <input …></label>`. */
export function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', {}, h('span', {}, label), control);
}

/** A status line the screen reader announces. */
export function status(): HTMLParagraphElement {
  return h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
}
