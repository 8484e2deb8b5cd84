// htm bound to preact's h (htm's own binding): tagged templates instead of JSX, so no JSX compiler step.

export { html } from 'htm/preact';
