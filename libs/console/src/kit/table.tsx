import type { ComponentChildren } from 'preact';

/** A column of TableHead: its heading, or the heading with the <th>'s class ("num") and title. */
export type Column = string | { label: ComponentChildren; class?: string; title?: string };

/**
 * The <thead> of a list table (`table responsive`, cards on a phone): one <th> a column, then,
 * with `actions`, the last column of the row's buttons, named "Actions" for screen readers only.
 * `scope` puts scope="col" on every heading (the tables that have it). Use it for every list table
 * whose cells carry `data-label` and whose last cell is `row-actions`.
 */
export function TableHead(props: { columns: Column[]; actions?: boolean | undefined; scope?: boolean }) {
  const scope = props.scope ? 'col' : undefined;
  return (
    <thead>
      <tr>
        {props.columns.map((c) =>
          typeof c === 'string' ? (
            <th key={c} scope={scope}>
              {c}
            </th>
          ) : (
            <th key={String(c.label)} scope={scope} class={c.class} title={c.title}>
              {c.label}
            </th>
          ),
        )}
        {props.actions && (
          <th scope={scope}>
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

/**
 * A button of a table row's `row-actions` cell (or a card's row of small buttons): a
 * `small-button` of the given kind, its text, and `label` as its aria-label where the text alone
 * would not say which row it acts on.
 */
export function RowButton(props: {
  kind: 'primary' | 'secondary' | 'danger-outline';
  onClick: () => void;
  disabled?: boolean | undefined;
  label?: string | undefined;
  children: ComponentChildren;
}) {
  return (
    <button
      type="button"
      class={`${props.kind} small-button`}
      disabled={props.disabled}
      aria-label={props.label}
      onClick={props.onClick}
    >
      {props.children}
    </button>
  );
}
