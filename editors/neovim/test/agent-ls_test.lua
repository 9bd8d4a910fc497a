-- Headless end-to-end test of editors/neovim/agent-ls.lua against the fake
-- server (editors/test/fake-server.js). Run by editors/test.sh:
--   AGENT_LS_LUA=... FAKE_SERVER=... WORKDIR=... nvim --headless -u NONE -i NONE -n -c "luafile this-file"
-- Exits 0 when every check passes, 1 otherwise (printing each failure).

local failures = {}
local function check(cond, what)
  if not cond then
    table.insert(failures, what)
  end
  return cond
end

local function read_log(path)
  local msgs = {}
  local f = io.open(path, "r")
  if not f then
    return msgs
  end
  for line in f:lines() do
    table.insert(msgs, vim.fn.json_decode(line))
  end
  f:close()
  return msgs
end

local function find(path, pred)
  for _, m in ipairs(read_log(path)) do
    if pred(m) then
      return m
    end
  end
  return nil
end

local function wait_for(path, pred, ms)
  local found
  vim.wait(ms or 5000, function()
    found = find(path, pred)
    return found ~= nil
  end, 20)
  return found
end

local function write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function main()
  local work = assert(os.getenv("WORKDIR"), "WORKDIR")
  local fake = assert(os.getenv("FAKE_SERVER"), "FAKE_SERVER")
  local logp = work .. "/server.log"
  vim.env.FAKE_LSP_LOG = logp
  local ws = work .. "/ws"
  write(ws .. "/.agent-ls.yaml", "store: mem.db\n")
  write(ws .. "/agents/a.agent.yaml", "roleTemplate:\n  name: refunds\n")
  write(ws .. "/agents/b.agent.json", '{"roleTemplate": {"name": "refunds"}}\n')
  write(ws .. "/notes.yaml", "a: 1\n")
  -- A nearer .git must not beat .agent-ls.yaml: markers are tried in order.
  vim.fn.mkdir(ws .. "/agents/.git", "p")

  local agent_ls = dofile(assert(os.getenv("AGENT_LS_LUA"), "AGENT_LS_LUA"))

  check(agent_ls.is_agent_file("/x/a.agent.yml") and not agent_ls.is_agent_file("/x/agent.yaml"), "is_agent_file")
  check(vim.fn.json_encode(agent_ls.initialization_options({})) == "{}", "empty init options encode as {}")
  check(vim.fn.json_encode(agent_ls.initialization_options({ scope = {} })) == '{"scope": {}}',
    "empty scope encodes as {}: " .. vim.fn.json_encode(agent_ls.initialization_options({ scope = {} })))
  check(agent_ls.find_root(ws .. "/agents/a.agent.yaml", { ".agent-ls.yaml", ".git" }) == ws, "find_root finds .agent-ls.yaml")

  local rendered = agent_ls.render_prompt({
    text = "", markdown = "",
    sections = {
      { title = "Identity", source = "role", fragments = {
        { source = "role", text = "## Identity" }, { source = "role", text = "You are precise." },
        { source = "role", text = "### Tone" }, { source = "memory", text = "Be brief.", memoryIds = { "m1" } } } },
      { title = "Boundaries", source = "role", fragments = { { source = "role", text = "## Boundaries" } } },
    },
  }, "s.agent.yaml")
  check(vim.deep_equal(vim.list_slice(rendered, 2), { "", "## Identity", "You are precise.", "", "### Tone",
    "> [memory m1] Be brief.", "", "## Boundaries" }), "render_prompt keeps the server's headings: " .. vim.inspect(rendered))

  vim.cmd("edit " .. ws .. "/agents/a.agent.yaml")
  local a_buf = vim.api.nvim_get_current_buf()
  local id = agent_ls.setup({
    cmd = { "node", fake },
    init_options = { storePath = "mem.db", actor = "human:alice", scope = { tenant = "acme" } },
  })
  if not check(type(id) == "number", "setup returns the client id, got " .. vim.inspect(id)) then
    return
  end
  local init = wait_for(logp, function(m)
    return m.method == "initialize"
  end)
  if not check(init ~= nil, "server got initialize") then
    return
  end
  local io_ = init.params.initializationOptions or {}
  check(io_.storePath == "mem.db", "initializationOptions.storePath: " .. vim.inspect(io_))
  check(io_.actor == "human:alice", "initializationOptions.actor")
  check(io_.scope and io_.scope.tenant == "acme", "initializationOptions.scope")
  check(init.params.rootUri == vim.uri_from_fname(ws), "rootUri is the .agent-ls.yaml dir: " .. tostring(init.params.rootUri))

  local open_a = wait_for(logp, function(m)
    return m.method == "textDocument/didOpen" and m.params.textDocument.uri == vim.uri_from_fname(ws .. "/agents/a.agent.yaml")
  end)
  check(open_a ~= nil and open_a.params.textDocument.languageId == "yaml", "didOpen a.agent.yaml as yaml")

  vim.wait(5000, function()
    return agent_ls.status[id] ~= nil
  end, 20)
  local st = agent_ls.status[id]
  check(st ~= nil and st.store == "locked" and st.pendingReviews == 1, "agent-ls/status recorded: " .. vim.inspect(st))

  -- Inlay hints through the generic request path (0.7 has no inlay-hint API).
  local res = vim.lsp.buf_request_sync(a_buf, "textDocument/inlayHint", {
    textDocument = { uri = vim.uri_from_bufnr(a_buf) },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 10, character = 0 } },
  }, 5000)
  local hint = res and res[id] and res[id].result and res[id].result[1]
  check(hint ~= nil and hint.label == "learned · 2 supports", "inlay hint answered: " .. vim.inspect(res))

  -- A second agent file in the same root reuses the client; JSON is sent as json.
  vim.cmd("edit " .. ws .. "/agents/b.agent.json")
  local b_buf = vim.api.nvim_get_current_buf()
  local open_b = wait_for(logp, function(m)
    return m.method == "textDocument/didOpen" and m.params.textDocument.uri == vim.uri_from_fname(ws .. "/agents/b.agent.json")
  end)
  check(open_b ~= nil and open_b.params.textDocument.languageId == "json", "didOpen b.agent.json as json")
  local cb = agent_ls.client(b_buf)
  check(cb ~= nil and cb.id == id, "b.agent.json shares the client")
  check(#vim.tbl_filter(function(c)
    return c.name == "agent-ls"
  end, vim.lsp.get_active_clients()) == 1, "one agent-ls client")

  -- Other YAML files are left alone.
  vim.cmd("edit " .. ws .. "/notes.yaml")
  check(agent_ls.client(0) == nil, "notes.yaml is not attached")

  -- The workspace config is served too, by the same client, as yaml.
  check(agent_ls.is_served_file("/x/.agent-ls.yaml") and not agent_ls.is_agent_file("/x/.agent-ls.yaml"), "is_served_file")
  vim.cmd("edit " .. ws .. "/.agent-ls.yaml")
  local open_cfg = wait_for(logp, function(m)
    return m.method == "textDocument/didOpen" and m.params.textDocument.uri == vim.uri_from_fname(ws .. "/.agent-ls.yaml")
  end)
  check(open_cfg ~= nil and open_cfg.params.textDocument.languageId == "yaml", "didOpen .agent-ls.yaml as yaml")
  local ccfg = agent_ls.client(0)
  check(ccfg ~= nil and ccfg.id == id, ".agent-ls.yaml shares the client")

  -- Composed prompt in a read-only buffer with memory lines marked.
  vim.cmd("buffer " .. a_buf)
  agent_ls.show_composed_prompt(a_buf)
  vim.wait(5000, function()
    return agent_ls.last_prompt_buf ~= nil
  end, 20)
  local pb = agent_ls.last_prompt_buf
  if check(pb ~= nil, "composed prompt buffer opened") then
    local lines = vim.api.nvim_buf_get_lines(pb, 0, -1, false)
    check(vim.tbl_contains(lines, "> [memory 01JREC] Deploys freeze on Fridays."), "memory line marked: " .. vim.inspect(lines))
    check(vim.tbl_contains(lines, "You handle refunds."), "authored line unmarked")
    check(vim.bo[pb].modifiable == false, "prompt buffer is read-only")
  end

  -- Review: pick the proposal, approve it.
  vim.cmd("buffer " .. a_buf)
  local selects = { 1, "approve" }
  vim.ui.select = function(items, _, on_choice)
    local want = table.remove(selects, 1)
    on_choice(type(want) == "number" and items[want] or want)
  end
  agent_ls.review(a_buf)
  local exec = wait_for(logp, function(m)
    return m.method == "workspace/executeCommand"
  end)
  check(exec ~= nil and exec.params.command == "agent-ls.approve" and exec.params.arguments[1].proposalId == "p1"
      and exec.params.arguments[1].uri == vim.uri_from_bufnr(a_buf),
    "approve sent as workspace/executeCommand: " .. vim.inspect(exec))

  -- Shutdown is clean.
  vim.lsp.stop_client(id)
  check(wait_for(logp, function(m)
    return m.method == "shutdown"
  end) ~= nil, "shutdown sent")
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  table.insert(failures, "error: " .. tostring(err))
end
if #failures > 0 then
  for _, f in ipairs(failures) do
    io.stderr:write("FAIL: " .. f .. "\n")
  end
  vim.cmd("cquit 1")
else
  io.stdout:write("neovim: all checks passed\n")
  vim.cmd("qall!")
end
