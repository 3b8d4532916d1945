// ESLint for the front end: static/lockviz/ (native ES modules in the browser, no bundler) and
// its unit tests, tests/js/ (ES modules in Node). `make lint` runs it after ruff and mypy, then
// Prettier checks the layout (prettier.config.js).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", "build/", ".venv/", "**/*.min.js"] },
  js.configs.recommended,
  {
    files: ["static/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
    rules: {
      // The modules talk through imports and exports, never through the window (docs/architecture.md).
      "no-restricted-syntax": [
        "error",
        {
          selector: "AssignmentExpression > MemberExpression.left[object.name=/^(window|globalThis|self)$/]",
          message: "No window.* globals: export it from a module and import it where it is needed.",
        },
      ],
    },
  },
  {
    files: ["tests/js/**/*.mjs", "*.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.node },
  },
  {
    // A script the browser tests inject into a page (not a module).
    files: ["tests/browser/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: globals.browser },
  },
];
