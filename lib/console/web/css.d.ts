/** esbuild bundles the stylesheet a module imports into the bundle's one CSS file. */
declare module '*.css';
