// MCP end to end through the built CLI (npm run build first: drives dist/cli/bin.js) with the
// scripted model and Sage's own test MCP server (src/mcp/test-support/test-server.mjs) over stdio
// and Streamable HTTP on 127.0.0.1: a deny rule on the destructive tool, an elicitation accepted
// with data and one declined (the non-interactive responder answers for the person, through the
// run's broker and store), a crashing server that gives an error result while the run goes on,
// a detached run's elicitation answered over HTTP by `sage serve`, which starts the servers from
// the RunSpec, and
// `sage mcp list --json`. (A server-level deny, `mcp__t`, is checked in src/mcp/mcp.test.ts.)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runEventSchema, type RunEvent } from '../../src/events/index.js';
import { root, runCli } from '../support/cli.js';

const SERVER = join(root, 'src/mcp/test-support/test-server.mjs');
let dir: string;
let project: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-mcp-cli-')));
  project = join(dir, 'project');
  mkdirSync(project);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ SAGE_HOME: join(dir, 'home'), SAGE_DATABASE_URL: '' });
function files(turns: unknown[], servers: unknown = { t: { command: process.execPath, args: [SERVER] } }): { script: string; config: string } {
  const script = join(dir, 'script.json');
  const config = join(dir, 'mcp.json');
  writeFileSync(script, JSON.stringify({ turns }));
  writeFileSync(config, JSON.stringify({ mcpServers: servers }));
  return { script, config };
}
const call = (name: string, input: unknown = {}) => ({ toolCalls: [{ name, input }] });
async function sageRun(args: string[], f: { script: string; config: string }): Promise<{ code: number; events: RunEvent[]; stderr: string }> {
  const result = await runCli(['run', 'task', '--model', `scripted:${f.script}`, '--mcp-config', f.config, '--json', '--db', join(dir, 'sage.db'), ...args], { cwd: project, env: env(), timeoutMs: 60_000 });
  const events = result.stdout.trim().split('\n').filter(Boolean).map((l) => runEventSchema.parse(JSON.parse(l)));
  return { code: result.code, events, stderr: result.stderr };
}
const completed = (events: RunEvent[]) => events.filter((e) => e.type === 'tool.completed').map((e) => e.data as { toolName: string; isError: boolean; content: string });

describe('sage run --json with MCP servers', () => {
  it('a deny rule stops the destructive tool; a crashing server gives an error result, the run goes on and the server is started again', async () => {
    const f = files([call('mcp__t__delete_record', { id: '7' }), call('mcp__t__crash'), call('mcp__t__echo', { text: 'still here' }), { text: 'done' }]);
    const { code, events } = await sageRun(['--non-interactive', '--auto', 'allow', '--deny', 'mcp__t__delete_record'], f);
    expect(code).toBe(0);
    const calls = completed(events);
    expect(calls.map((c) => [c.toolName, c.isError])).toEqual([['mcp__t__delete_record', true], ['mcp__t__crash', true], ['mcp__t__echo', false]]);
    expect(events.find((e) => e.type === 'permission.decided' && e.data.toolName === 'mcp__t__delete_record')?.data).toMatchObject({ behavior: 'deny', rule: 'mcp__t__delete_record' });
    expect(calls[1]!.content).toMatch(/stopped during crash/);
    expect(calls[2]!.content).toBe('echo: still here');
    expect(events.some((e) => e.type === 'run.completed')).toBe(true);
  });

  it('an elicitation is an interaction of the run: accepted with data, or declined', async () => {
    const f = files([call('mcp__t__ask_name'), { text: 'done' }]);
    const accepted = await sageRun(['--non-interactive', '--auto', 'allow'], f);
    const asked = accepted.events.find((e) => e.type === 'interaction.requested' && (e.data as { request?: { kind?: string } }).request?.kind === 'combined');
    expect(asked).toBeDefined();
    expect(completed(accepted.events)[0]).toMatchObject({ toolName: 'mcp__t__ask_name', isError: false, content: 'hello Dee ({"name":"Dee","color":"red"})' });
    // The tool itself is allowed by rule; the person (here the auto-responder) declines the form.
    const declined = await sageRun(['--non-interactive', '--auto', 'deny', '--allow', 'mcp__t__ask_name'], f);
    expect(completed(declined.events)[0]).toMatchObject({ toolName: 'mcp__t__ask_name', content: 'elicitation decline' });
  });

  it('durable elicitation: a detached run waits on the form; it is answered over HTTP in another process (sage serve), which restarts the servers from the RunSpec and the server gets the answer', async () => {
    const f = files([call('mcp__t__ask_name'), { text: 'done' }]);
    const db = join(dir, 'sage.db');
    const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: project, env: env(), timeoutMs: 60_000 });
    expect((await sage(['run', 'task', '--model', `scripted:${f.script}`, '--mcp-config', f.config, '--allow', 'mcp__t__ask_name', '--detach'])).code).toBe(0);
    // The MCP file is gone before the answer: the process that resumes the run must not need it.
    rmSync(f.config);
    let pending: Array<{ id: string; kind: string; request: { toolName?: string } }> = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && pending.length === 0; await new Promise((r) => setTimeout(r, 100))) {
      pending = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout) as typeof pending;
    }
    expect(pending.map((p) => [p.kind, p.request.toolName])).toEqual([['combined', 'mcp__t__ask_name']]);
    const serve = spawn(process.execPath, [join(root, 'dist/cli/bin.js'), 'serve', '--db', db, '--port', '0', '--allow-scripted'], { cwd: project, env: { ...process.env, ...env() }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let out = '';
        serve.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        serve.on('exit', () => reject(new Error(`sage serve exited: ${out}`)));
      });
      const id = pending[0]!.id;
      const answer = { requestId: id, kind: 'combined', responses: { name: { kind: 'input', text: 'Web Person' }, color: { kind: 'select', selected: ['green'] }, age: { kind: 'input', text: '' }, __decision: { kind: 'confirm', confirmed: true } } };
      const response = await fetch(`${base}/interactions/${encodeURIComponent(id)}/respond`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer) });
      expect(response.status).toBe(200);
      let status = '';
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && status !== 'completed'; await new Promise((r) => setTimeout(r, 100))) {
        status = ((await (await fetch(`${base}/runs/${pending[0]!.id.split(':')[0]}`)).json()) as { status: string }).status;
      }
      expect(status).toBe('completed');
    } finally {
      serve.kill();
    }
    const runId = pending[0]!.id.split(':')[0]!;
    const shown = JSON.parse((await sage(['runs', 'show', runId, '--json', '--events', '1000'])).stdout) as { events: Array<{ type: string; data: Record<string, unknown> }> };
    expect(shown.events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ toolName: 'mcp__t__ask_name', isError: false, content: 'hello Web Person ({"name":"Web Person","color":"green"})' });
  });

  it('a bad --mcp-config is a clear error naming the file and field; nothing runs', async () => {
    const f = files([{ text: 'done' }], { 'a__b': { command: 'x' } });
    const result = await runCli(['run', 'task', '--model', `scripted:${f.script}`, '--mcp-config', f.config, '--db', join(dir, 'sage.db')], { cwd: project, env: env() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`${f.config}: mcpServers.a__b:`);
  });
});

describe('an MCP form answered with sage respond', () => {
  it('sage respond ID --answer name=Ada: the run resumes and the server gets the answer; the optional fields stay out', async () => {
    const f = files([call('mcp__t__ask_name'), { text: 'done' }]);
    const db = join(dir, 'sage.db');
    const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: project, env: env(), timeoutMs: 60_000 });
    expect((await sage(['run', 'task', '--model', `scripted:${f.script}`, '--mcp-config', f.config, '--allow', 'mcp__t__ask_name', '--detach'])).code).toBe(0);
    let pending: Array<{ id: string; answerWith?: string }> = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && pending.length === 0; await new Promise((r) => setTimeout(r, 100))) {
      pending = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout) as typeof pending;
    }
    expect(pending[0]?.answerWith).toBe('--answer field=value… (fields: name, color, age) or --deny');
    const id = pending[0]!.id;
    const wrong = await sage(['respond', id, '--answer', 'colour=red']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('"colour" is not a field of this request (name, color, age)');
    const answered = await sage(['respond', id, '--answer', 'name=Ada']);
    expect(answered.code).toBe(0);
    const shown = JSON.parse((await sage(['runs', 'show', id.split(':')[0]!, '--json', '--events', '1000'])).stdout) as { run: { status: string }; events: Array<{ type: string; data: Record<string, unknown> }> };
    expect(shown.events.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ toolName: 'mcp__t__ask_name', isError: false, content: 'hello Ada ({"name":"Ada"})' });
  });
});

describe('MCP over Streamable HTTP and sage mcp list', () => {
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    child = spawn(process.execPath, [SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        const m = /LISTENING (\S+)/.exec(chunk.toString());
        if (m) resolve(m[1]!);
      });
      child.on('exit', () => reject(new Error('the test server exited')));
    });
  });
  afterAll(() => {
    child.kill();
  });

  it('a run calls an HTTP server tool', async () => {
    const f = files([call('mcp__web__echo', { text: 'over http' }), { text: 'done' }], { web: { type: 'http', url } });
    const { events } = await sageRun(['--non-interactive', '--auto', 'allow'], f);
    expect(completed(events)[0]).toMatchObject({ toolName: 'mcp__web__echo', isError: false, content: 'echo: over http' });
  });

  it('sage mcp list --json shows each server, its status and tools', async () => {
    const f = files([], { t: { command: process.execPath, args: [SERVER] }, web: { type: 'http', url }, gone: { command: join(dir, 'missing') } });
    const result = await runCli(['mcp', 'list', '--json', '--mcp-config', f.config], { cwd: project, env: env() });
    const out = JSON.parse(result.stdout) as { servers: Array<{ name: string; transport: string; status: string; tools: Array<{ name: string; risk: string }> }> };
    const by = Object.fromEntries(out.servers.map((s) => [s.name, s]));
    expect(by.t).toMatchObject({ transport: 'stdio', status: 'connected' });
    expect(by.t!.tools).toContainEqual({ name: 'mcp__t__delete_record', server: 't', risk: 'HIGH', description: 'Deletes a record (destructive).' });
    expect(by.web).toMatchObject({ transport: 'http', status: 'connected' });
    expect(by.gone).toMatchObject({ status: 'failed' });
    expect(result.code).toBe(1);
  });
});

describe('sage mcp list in a folder that is not trusted', () => {
  it("lists the servers of the folder's .mcp.json that wait for trust and says how to trust it, never 'No MCP servers'", async () => {
    writeFileSync(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { tracker: { command: process.execPath, args: [SERVER] }, docs: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } }));
    const text = await runCli(['mcp', 'list'], { cwd: project, env: env() });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('No MCP servers');
    expect(text.stdout).toContain(join(project, '.mcp.json'));
    expect(text.stdout).toMatch(/tracker, docs/);
    expect(text.stdout).toMatch(/not trusted/);
    expect(text.stdout).toMatch(/sage trust/);
    const json = JSON.parse((await runCli(['mcp', 'list', '--json'], { cwd: project, env: env() })).stdout) as { servers: unknown[]; waitingForTrust: Array<{ file: string; servers: string[] }> };
    expect(json.servers).toEqual([]);
    expect(json.waitingForTrust).toEqual([{ file: join(project, '.mcp.json'), servers: ['tracker', 'docs'] }]);
  });
});
