// Types of `lightembed/starlight` (index.mjs): the Starlight plugin and the Astro integration.
import type { StarlightPlugin } from "@astrojs/starlight/types";
import type { AstroIntegration } from "astro";

export interface LightembedStarlightOptions {
  /** CSS selector of the content indexed on each page; default `"main"` (no header, sidebars, footer). */
  rootSelector?: string;
  /** Globs of pages (relative to the output folder) left out; `"404.html"` always is. */
  exclude?: string[];
  /** Also index what the default rules leave out (`_sources/`, `NAME.txt` beside `NAME.html`) when `false`. */
  defaultExcludes?: boolean;
  /** A `.bin` model path; default the shipped static model. */
  model?: string;
  /** Index dims (as `lightembed site --dims`). */
  dims?: number;
  /** Ship the whole model instead of the site model. */
  fullModel?: boolean;
  /** Embedding threads; default every core. */
  threads?: number;
  /** The box's placeholder; default Starlight's translated "Search". */
  placeholder?: string;
}

/** The Starlight plugin: lightembed's Search component, `pagefind: false`, and the index written by `astro build`. */
export default function lightembedStarlight(options?: LightembedStarlightOptions): StarlightPlugin;
export { lightembedStarlight };
/** The Astro integration alone: `buildSite` on the output folder in `astro:build:done`. */
export function lightembedIntegration(options?: LightembedStarlightOptions): AstroIntegration;
/** Absolute path of the Search component, for `starlight({ components: { Search } })`. */
export const SEARCH_COMPONENT: string;
