// Print what the real @actions/core (pinned in package.json) writes for each case.
//
// Reads a JSON array of cases on stdin and writes a JSON array on stdout: for each case,
// the exact bytes the toolkit wrote to process.stdout, base64-encoded (so line
// terminators and every code point survive the trip unchanged).
//
// @actions/core 3.x exports only its package root ("exports": {".": ...}), so the
// internal command module (issueCommand) cannot be imported; the cases call the public
// functions that reach it, with process.stdout.write captured:
//   {"call": "error"|"warning"|"notice", "message": str, "properties": {...}?}
//       -> core.error(message, properties) etc.; properties omitted -> no second argument
//   {"call": "debug", "message": str}            -> issueCommand('debug', {}, message)
//   {"call": "startGroup", "name": str}          -> issueCommand('group', {}, name)
//   {"call": "saveState", "name": str, "value": str}
//       -> issueCommand('save-state', {name}, value), with GITHUB_STATE unset
import * as core from '@actions/core'

delete process.env.GITHUB_STATE
delete process.env.GITHUB_OUTPUT

async function readStdin() {
  const chunks = []
  for await (const chunk of process.stdin) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

function capture(fn) {
  const chunks = []
  const original = process.stdout.write
  process.stdout.write = (chunk, encoding, callback) => {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : Buffer.from(chunk))
    if (typeof encoding === 'function') encoding()
    else if (typeof callback === 'function') callback()
    return true
  }
  try {
    fn()
  } finally {
    process.stdout.write = original
  }
  return Buffer.concat(chunks).toString('base64')
}

function run(c) {
  switch (c.call) {
    case 'error':
    case 'warning':
    case 'notice':
      return capture(() =>
        'properties' in c ? core[c.call](c.message, c.properties) : core[c.call](c.message)
      )
    case 'debug':
      return capture(() => core.debug(c.message))
    case 'startGroup':
      return capture(() => core.startGroup(c.name))
    case 'saveState':
      return capture(() => core.saveState(c.name, c.value))
    default:
      throw new Error(`unknown call: ${JSON.stringify(c.call)}`)
  }
}

const cases = JSON.parse(await readStdin())
const results = cases.map(run)
process.stdout.write(JSON.stringify(results))
