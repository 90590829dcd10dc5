import { z } from 'zod';

// Imported by main.ts before anything that builds a schema: zod reads the setting when an object
// schema is built. By default the first parse of each object schema generates a parser for its
// shape (new Function) and compiles it, which pays off only over many parses; a command of the CLI
// parses most of its schemas once or twice (a one-turn `sage run`: 9 such parsers, none of them in
// the CLI's code cache, since V8 caches no code made by new Function). Same results either way.
// Not for `sage serve`: a long-lived server parses the same schemas all day.
if (!process.argv.includes('serve')) z.config({ jitless: true });
