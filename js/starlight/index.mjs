// lightembed for Astro Starlight: a Starlight plugin that puts lightembed's search in place of
// Pagefind with one config change.
//
//   // astro.config.mjs
//   import starlight from "@astrojs/starlight";
//   import lightembedStarlight from "lightembed/starlight";
//   export default defineConfig({
//     integrations: [starlight({ title: "Docs", plugins: [lightembedStarlight()] })],
//   });
//
// In its `config:setup` hook the plugin
//   - replaces Starlight's `Search` component with ./Search.astro (Starlight's header button and
//     modal, with <lightembed-search> inside, loaded from `<base>/lightembed/`),
//   - turns Pagefind off (`pagefind: false`: no `dist/pagefind/`),
//   - adds an Astro integration whose `astro:build:done` hook runs `buildSite` (what
//     `lightembed site` does) on the build's output folder, so `astro build` writes
//     `dist/lightembed/` after the pages.
// Options are `buildSite`'s (js/README.md): `rootSelector` (default "main": the page's content,
// without Starlight's header, sidebars and footer), `exclude` (globs, added to "404.html"),
// `model`, `dims`, `fullModel`, `defaultExcludes`, `threads`; and `placeholder`, the box's text
// (default Starlight's translated "Search").

import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const NAME = "lightembed-starlight";
/** The component that replaces Starlight's `Search`, as a path (Starlight imports it by path). */
export const SEARCH_COMPONENT = fileURLToPath(new URL("./Search.astro", import.meta.url));
/** Pages left out of the index whatever the options: Starlight's "page not found". */
const ALWAYS_EXCLUDED = ["404.html"];
const BUILD_OPTIONS = ["model", "dims", "fullModel", "rootSelector", "exclude", "defaultExcludes", "threads"];

/**
 * The Starlight plugin.
 * @param {import("./index.d.mts").LightembedStarlightOptions} [options]
 * @returns {import("@astrojs/starlight/types").StarlightPlugin}
 */
export default function lightembedStarlight(options = {}) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`lightembedStarlight: options must be an object, not ${options === null ? "null" : typeof options}`);
  }
  const known = [...BUILD_OPTIONS, "placeholder"];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`lightembedStarlight: unknown option "${key}"; expected one of ${known.join(", ")}`);
    }
  }
  if (options.exclude !== undefined && !Array.isArray(options.exclude)) {
    throw new TypeError(`lightembedStarlight: exclude must be an array of globs, not ${typeof options.exclude}`);
  }
  if (options.placeholder !== undefined && typeof options.placeholder !== "string") {
    throw new TypeError(`lightembedStarlight: placeholder must be a string, not ${typeof options.placeholder}`);
  }
  return {
    name: NAME,
    hooks: {
      "config:setup"({ config, updateConfig, addIntegration, logger }) {
        const own = config.components?.Search;
        if (own && own !== SEARCH_COMPONENT) {
          logger.warn(`the Search component set in starlight({ components }) (${own}) is replaced by lightembed's`);
        }
        if (config.pagefind && typeof config.pagefind === "object") {
          logger.warn("starlight({ pagefind }) options are ignored: lightembed builds the search index");
        }
        updateConfig({
          components: { ...config.components, Search: SEARCH_COMPONENT },
          pagefind: false,
        });
        addIntegration(lightembedIntegration(options));
      },
    },
  };
}

/**
 * The Astro integration alone (what the plugin adds): after `astro build`, `buildSite` on the
 * output folder. Use it with `components: { Search: SEARCH_COMPONENT }` and `pagefind: false`
 * when not using the plugin, or on any Astro site that renders <lightembed-search> itself.
 * @param {import("./index.d.mts").LightembedStarlightOptions} [options]
 * @returns {import("astro").AstroIntegration}
 */
export function lightembedIntegration(options = {}) {
  const placeholder = options.placeholder;
  return {
    name: NAME,
    hooks: {
      "astro:config:setup"({ updateConfig }) {
        // The component reads its placeholder from here (undefined: Starlight's own label).
        updateConfig({
          vite: { define: { "import.meta.env.LIGHTEMBED_PLACEHOLDER": JSON.stringify(placeholder ?? "") } },
        });
      },
      async "astro:build:done"({ dir, logger }) {
        const site = fileURLToPath(dir);
        const build = {};
        for (const key of BUILD_OPTIONS) if (options[key] !== undefined) build[key] = options[key];
        build.rootSelector ??= "main";
        build.exclude = [...ALWAYS_EXCLUDED, ...(build.exclude ?? [])];
        const { buildSite } = require("../lib/node.js");
        const t0 = performance.now();
        logger.info("Building the search index with lightembed...");
        const r = await buildSite({ ...build, site, quiet: true });
        const s = (performance.now() - t0) / 1000;
        logger.info(`${r.pages} pages, ${r.passages} passages → ${r.bundle} in ${s.toFixed(2)} s`);
      },
    },
  };
}

export { lightembedStarlight };
