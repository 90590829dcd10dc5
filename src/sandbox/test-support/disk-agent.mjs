// A fake agent that touches the disk itself, as a real one does with its own tools: it plays
// DISK_AGENT_PLAN (JSON: {read: path} | {write: {path, content}} | {list: dir} | {rename: {from, to}}) and prints one JSON
// line with what each step got (the content, "ok", the names, or the error code).
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';

const plan = JSON.parse(process.env.DISK_AGENT_PLAN ?? '[]');
const results = plan.map((step) => {
  try {
    if (step.read !== undefined) return { read: readFileSync(step.read, 'utf8') };
    if (step.write !== undefined) {
      writeFileSync(step.write.path, step.write.content);
      return { write: 'ok' };
    }
    if (step.list !== undefined) return { list: readdirSync(step.list).sort() };
    if (step.rename !== undefined) {
      renameSync(step.rename.from, step.rename.to);
      return { rename: 'ok' };
    }
    return { error: 'unknown step' };
  } catch (error) {
    return { error: error.code ?? error.message };
  }
});
process.stdout.write(`${JSON.stringify(results)}\n`);
