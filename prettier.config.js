// Prettier lays out the JavaScript (`make lint` checks, `npx prettier --write` fixes); ESLint
// (eslint.config.js) finds mistakes. Prettier rather than Biome: ESLint already lints, and Biome
// would be a second linter with rules of its own beside it, where Prettier does one job, is the
// formatter editors already run, and is plain JavaScript (no native binary per platform).
// 120 columns: the diagram's drawing code reads best with a shape's attributes on one line.
export default {
  printWidth: 120,
};
