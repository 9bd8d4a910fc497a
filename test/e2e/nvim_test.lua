-- End-to-end test of `agent-ls serve` in headless Neovim 0.7+ (plain Lua, no
-- plugins):
--
--   AGENT_LS_BIN=... AGENT_LS_ROOT=... nvim --headless -u NONE -c 'luafile nvim_test.lua'
--
-- The workspace (prepared by e2e_test.go) holds deploy.agent.yaml, a promoted
-- fact and a pending proposal for an escalation trigger. Exits with
-- `cquit 0` when every check passes, `cquit 1` on the first failure.
-- When editors/neovim/agent-ls.lua exists and exposes setup(opts), the
-- client is started through it, so the shipped config is what is tested.

local bin = os.getenv('AGENT_LS_BIN')
local root = os.getenv('AGENT_LS_ROOT')
local TRIGGER = 'Ask before deleting any resource in prod'
local TIMEOUT = 20000

local function log(msg)
  io.stdout:write(msg .. '\n')
  io.stdout:flush()
end

local function fail(msg)
  log('FAIL: ' .. msg)
  vim.cmd('cquit 1')
end

local function check(cond, msg)
  if not cond then
    fail(msg)
    error(msg)
  end
  log('ok - ' .. msg)
end

if not bin or not root then
  fail('set AGENT_LS_BIN and AGENT_LS_ROOT')
end

local file = root .. '/deploy.agent.yaml'
local uri = vim.uri_from_fname(file)
local diags = {}       -- version -> first diagnostics published for it
local statuses = {}
local refreshes = 0

local handlers = {
  ['textDocument/publishDiagnostics'] = function(_, result)
    -- Keep the first publish of each version: the parse + schema pass (the
    -- lint pass that may follow adds e.g. the pending-review note).
    if result and result.uri == uri and diags[result.version or -1] == nil then
      diags[result.version or -1] = result.diagnostics
    end
  end,
  ['agent-ls/status'] = function(_, result)
    table.insert(statuses, result)
  end,
  ['workspace/inlayHint/refresh'] = function()
    refreshes = refreshes + 1
    return vim.NIL
  end,
  ['window/logMessage'] = function() end,
  ['window/showMessage'] = function(_, result)
    log('# showMessage: ' .. result.message)
  end,
}

local capabilities = vim.lsp.protocol.make_client_capabilities()
capabilities.workspace = capabilities.workspace or {}
capabilities.workspace.inlayHint = { refreshSupport = true }
capabilities.textDocument.inlayHint = {}

-- Open the file first so the client attaches to its buffer.
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
vim.bo[bufnr].filetype = 'yaml'

local config = {
  name = 'agent-ls',
  cmd = { bin, 'serve' },
  root_dir = root,
  capabilities = capabilities,
  handlers = handlers,
  init_options = { actor = 'human:nvim' },
  workspace_folders = { { uri = vim.uri_from_fname(root), name = 'e2e' } },
}

-- Global handlers, so they also apply to a client the shipped config starts
-- (its own handlers table only overrides agent-ls/status).
for method, h in pairs(handlers) do
  vim.lsp.handlers[method] = h
end

local client_id
local shipped_path = '../../editors/neovim/agent-ls.lua'
local shipped
if vim.loop.fs_stat(shipped_path) then
  local ok, mod = pcall(dofile, shipped_path)
  check(ok and type(mod) == 'table' and type(mod.setup) == 'function', 'editors/neovim/agent-ls.lua loads and has setup()')
  shipped = mod
  client_id = shipped.setup({
    cmd = config.cmd,
    init_options = config.init_options,
    capabilities = { workspace = { inlayHint = { refreshSupport = true } }, textDocument = { inlayHint = {} } },
  })
  check(type(client_id) == 'number', 'setup() of the shipped config returns the client id')
  log('# started through editors/neovim/agent-ls.lua')
else
  client_id = vim.lsp.start_client(config)
  check(client_id ~= nil, 'start_client')
  vim.lsp.buf_attach_client(bufnr, client_id)
end
-- Status notifications, however the client was started.
local function all_statuses()
  local out = {}
  for _, s in ipairs(statuses) do table.insert(out, s) end
  if shipped and shipped.status and shipped.status[client_id] then
    table.insert(out, shipped.status[client_id])
  end
  return out
end

check(vim.wait(TIMEOUT, function() return diags[0] ~= nil or diags[1] ~= nil end, 20), 'diagnostics published after open')
local first = diags[0] or diags[1]
check(type(first) == 'table' and #first == 0, 'clean fixture publishes []')
check(vim.wait(TIMEOUT, function()
  for _, s in ipairs(all_statuses()) do
    if s.uri == uri and s.store == 'connected' and s.pendingReviews == 1 then return true end
  end
  return false
end, 20), 'agent-ls/status: connected, 1 pending review')

local client = vim.lsp.get_client_by_id(client_id)
check(client.server_capabilities ~= nil or client.resolved_capabilities ~= nil, 'client initialized')

-- Edit: rename a key; the unknown-key diagnostic lands on it; undo clears.
local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
local methodology
for i, l in ipairs(lines) do
  if l:match('^  methodology:') then methodology = i - 1 end
end
check(methodology ~= nil, 'fixture has a methodology key')
local before = vim.lsp.util.buf_versions[bufnr]
vim.api.nvim_buf_set_lines(bufnr, methodology, methodology + 1, false, { '  methodolgy:' })
local v2 = vim.lsp.util.buf_versions[bufnr]
check(v2 ~= before, 'edit bumped the document version')
check(vim.wait(TIMEOUT, function() return diags[v2] ~= nil end, 20), 'diagnostics for the edited version')
local found = false
for _, d in ipairs(diags[v2]) do
  if d.message == 'unknown property "methodolgy"' and d.range.start.line == methodology
    and d.range.start.character == 2 and d.range['end'].character == 12 then
    found = true
  end
end
check(found, 'unknown key diagnostic on the key itself')
vim.api.nvim_buf_set_lines(bufnr, methodology, methodology + 1, false, { lines[methodology + 1] })
local v3 = vim.lsp.util.buf_versions[bufnr]
check(vim.wait(TIMEOUT, function() return diags[v3] ~= nil end, 20) and #diags[v3] == 0, 'fixed text publishes []')

local function request(method, params)
  local res = vim.lsp.buf_request_sync(bufnr, method, params, TIMEOUT)
  local r = res and res[client_id]
  if not r then return nil, 'no answer' end
  return r.result, r.err
end

local full = { start = { line = 0, character = 0 }, ['end'] = { line = #lines + 5, character = 0 } }
local function hint_with(hints, prefix)
  for _, h in ipairs(hints or {}) do
    local label = type(h.label) == 'string' and h.label or ''
    if label:sub(1, #prefix) == prefix then return h end
  end
  return nil
end

-- Completion at a position: the incident judgment's unwritten keys.
local incident
for i, l in ipairs(lines) do
  if l == '    - domain: incident' then incident = i end
end
local at_key
for i = incident + 1, #lines do
  if lines[i] == '      escalationTriggers:' then at_key = i - 1; break end
end
check(at_key ~= nil, 'fixture has the incident judgment\'s escalationTriggers key')
local completion = request('textDocument/completion', { textDocument = { uri = uri }, position = { line = at_key, character = 6 } })
local keys = {}
for _, it in ipairs((completion and (completion.items or completion)) or {}) do
  if it.kind == 10 then table.insert(keys, it.label) end -- CompletionItemKind.Property
end
table.sort(keys)
check(table.concat(keys, ',') == 'constraints,examples', 'completion offers the unwritten keys: ' .. table.concat(keys, ','))

-- The outline, compared with the golden file by e2e_test.go.
local symbols, serr = request('textDocument/documentSymbol', { textDocument = { uri = uri } })
check(serr == nil and type(symbols) == 'table' and #symbols > 0, 'documentSymbol answered')
local out = os.getenv('OUTLINE_OUT')
if out then
  vim.fn.writefile({ vim.fn.json_encode(symbols) }, out)
end

local hints, err = request('textDocument/inlayHint', { textDocument = { uri = uri }, range = full })
check(err == nil, 'inlay hints answered')
local cand = hint_with(hints, '(candidate) “' .. TRIGGER .. '”')
check(cand ~= nil, 'pending trigger shown as a candidate hint')
check(hint_with(hints, '+ “Deploys go out Tuesdays') ~= nil, 'promoted fact shown as a memory hint')

local hover = request('textDocument/hover', { textDocument = { uri = uri }, position = { line = cand.position.line, character = 10 } })
check(hover and hover.contents and hover.contents.value:find(TRIGGER, 1, true) ~= nil, 'hover shows the learned line')

local actions = request('textDocument/codeAction', { textDocument = { uri = uri }, range = full, context = { diagnostics = {} } })
local approve
for _, a in ipairs(actions or {}) do
  if a.title:find('^Approve promote of') and a.title:find('Ask before', 1, true) then approve = a end
end
check(approve ~= nil and approve.command ~= nil, 'approve code action offered')
local refreshed = refreshes
local res, cerr = request('workspace/executeCommand', { command = approve.command.command, arguments = approve.command.arguments })
check(cerr == nil and res and res.ok and res.status == 'approved', 'approve ran: ' .. vim.inspect(res or cerr))
check(vim.wait(TIMEOUT, function() return refreshes > refreshed end, 20), 'server asked for workspace/inlayHint/refresh')
hints = request('textDocument/inlayHint', { textDocument = { uri = uri }, range = full })
check(hint_with(hints, '+ “' .. TRIGGER .. '”') ~= nil, 'the approved trigger is now a memory-derived hint')

local prompt = request('agent-ls/composedPrompt', { uri = uri })
check(prompt and prompt.text:find('- ' .. TRIGGER, 1, true) ~= nil, 'agent-ls/composedPrompt renders it')

vim.lsp.stop_client(client_id)
check(vim.wait(TIMEOUT, function() return vim.lsp.client_is_stopped(client_id) end, 20), 'client stopped')
vim.cmd('cquit 0')
