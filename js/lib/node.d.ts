// Types of the npm package's Node entry (lib/node.js): the wasm classes (`Model`, `SearchIndex`,
// `SiteIndex`, …) and the site build.
export * from "../pkg/node/lightembed_wasm.js";
import type { Model } from "../pkg/node/lightembed_wasm.js";

/** An error with the native CLI's message (`error: MESSAGE` on the command line). */
export class LightembedError extends Error {
  name: "LightembedError";
  /** The exit code the command line gives it (1). */
  exitCode: number;
  /** For a model that fails a load rule: the rule's name (e.g. `"bad_magic"`). */
  rule?: string;
}

/** Options of `createIndex` (the flags of `lightembed site`). */
export interface CreateIndexOptions {
  /** Path of a `.bin` model; default the shipped static model (`lightembed-en-static`). */
  model?: string;
  /** Index dims (a Matryoshka prefix); default 128 when the model has it, else all. */
  dims?: number;
  /** Ship the whole model instead of a site model (the site's tokens, the index dims). */
  fullModel?: boolean;
  /** CSS selector of each page's content element (`main`, `article.content`). */
  rootSelector?: string;
  /** Store the index core, term shards, text chunks, model and wasm gzip-compressed (default
   *  true; the widget decompresses them, so a host that does not compress sends few bytes);
   *  false writes them raw (`--no-gzip`). */
  gzip?: boolean;
  /** Globs (relative to the folder) that `addDirectory` leaves out; `*` stays in a folder, `**` crosses. */
  exclude?: string[];
  /** The default rules (`_sources/` folders); default true. */
  defaultExcludes?: boolean;
  /** Embedding threads (worker_threads); default the machine's cores. */
  threads?: number;
}

/** A site index being built. Every method rejects with a `LightembedError`. */
export interface SiteIndexBuilder {
  /** Adds every page of a built site (sorted; hidden entries and excluded paths left out). */
  addDirectory(options: { path: string }): Promise<{ pages: number; passages: number; skipped: number }>;
  /** Adds one HTML page served at `url` (or at the URL of `sourcePath`, relative to the site root). */
  addHTMLFile(options: { url?: string; sourcePath?: string; content: string | Uint8Array }): Promise<{ passages: number }>;
  /** Adds plain text at `url`, titled `meta.title`. */
  addCustomRecord(options: { url: string; content: string; meta?: { title?: string } }): Promise<{ passages: number }>;
  /** The bundle's files (embedding happens here, once); after it, adds are refused. */
  getFiles(): Promise<{ files: { path: string; content: Uint8Array }[] }>;
  /** Writes the bundle to `outputPath` (default `lightembed/` in the first `addDirectory` folder), replacing an earlier bundle whole. */
  writeFiles(options?: { outputPath?: string }): Promise<{ outputPath: string; pages: number; passages: number }>;
}

/** A new site index (Pagefind's `createIndex`). */
export function createIndex(options?: CreateIndexOptions): Promise<SiteIndexBuilder>;

/** `lightembed site`: builds and writes `SITE/lightembed/`. */
export function buildSite(
  options: CreateIndexOptions & { site: string; quiet?: boolean },
): Promise<{ bundle: string; pages: number; passages: number; skipped: number; seconds: number; summary: string }>;

/** Loads and verifies a model: a `.bin` path, or a bundled name (`"lightembed-en-static"`, the default). */
export function loadModel(pathOrName?: string): Promise<Model>;
