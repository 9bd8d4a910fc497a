-- agent-ls for Neovim: starts `agent-ls serve` for agent files
-- (*.agent.yaml, *.agent.yml, *.agent.json) and the workspace config
-- (.agent-ls.yaml: completion, hover and diagnostics from its schema) with
-- the built-in LSP client.
--
-- Neovim >= 0.8 uses vim.lsp.start; 0.7 falls back to vim.lsp.start_client +
-- vim.lsp.buf_attach_client (one client per root). >= 0.10 enables inlay hints.
--
--   local agent_ls = dofile("/path/to/editors/neovim/agent-ls.lua")
--   agent_ls.setup({ init_options = { storePath = ".agent-memory/memory.db", actor = "human:me" } })
--
-- Protocol contract: docs/LSP-PROTOCOL.md.

local M = {}

--- Defaults of setup(opts); every key may be overridden.
M.defaults = {
  -- The server command line.
  cmd = { "agent-ls", "serve" },
  -- Sent as initializationOptions: storePath, scope (table), actor ("human:NAME"), budgets (table).
  init_options = {},
  -- Files that mark the workspace root, nearest first; the file's directory when none is found.
  root_markers = { ".agent-ls.yaml", ".git" },
  -- Enable inlay hints (memory-derived lines) on Neovim >= 0.10.
  inlay_hints = true,
  -- Called as on_attach(client, bufnr).
  on_attach = nil,
  -- Extra client capabilities (merged over vim.lsp.protocol.make_client_capabilities()).
  capabilities = nil,
  -- Warn (vim.notify) when the store is locked, missing or corrupt.
  notify_store = true,
}

local uv = vim.loop
local agent_pattern = { "*.agent.yaml", "*.agent.yml", "*.agent.json", ".agent-ls.yaml" }
local opts_in_use = nil
local clients_by_root = {} -- 0.7 only: root_dir -> client id

--- Latest `agent-ls/status` per client id: {store, storePath, pendingReviews, message, uri?}.
M.status = {}

--- Reports whether a file name is an agent file.
function M.is_agent_file(name)
  if type(name) ~= "string" then
    return false
  end
  return name:match("%.agent%.ya?ml$") ~= nil or name:match("%.agent%.json$") ~= nil
end

--- Reports whether a file name is one the server serves: an agent file or
--- the workspace config (.agent-ls.yaml).
function M.is_served_file(name)
  if type(name) ~= "string" then
    return false
  end
  return M.is_agent_file(name) or vim.fn.fnamemodify(name, ":t") == ".agent-ls.yaml"
end

local function language_id(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name:match("%.json$") then
    return "json"
  end
  return "yaml"
end

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

--- Finds the workspace root of a file: the nearest directory holding one of
--- the markers (checked marker by marker, so .agent-ls.yaml wins over .git).
function M.find_root(fname, markers)
  local start = vim.fn.fnamemodify(fname, ":p:h")
  for _, marker in ipairs(markers) do
    local dir = start
    while true do
      if exists(dir .. "/" .. marker) then
        return dir
      end
      local parent = vim.fn.fnamemodify(dir, ":h")
      if parent == dir then
        break
      end
      dir = parent
    end
  end
  return start
end

local function merge(defaults, opts)
  return vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
end

local function store_handler(opts)
  return function(err, result, ctx)
    if err or type(result) ~= "table" then
      return
    end
    local prev = M.status[ctx.client_id]
    M.status[ctx.client_id] = result
    if opts.notify_store and result.store ~= "connected" and (prev == nil or prev.store ~= result.store) then
      local msg = string.format("agent-ls: store %s: %s", tostring(result.store), tostring(result.storePath or ""))
      if result.message then
        msg = msg .. " (" .. result.message .. ")"
      end
      vim.notify(msg, vim.log.levels.WARN)
    end
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "AgentLsStatus", modeline = false })
  end
end

local function enable_inlay_hints(bufnr)
  local ih = vim.lsp.inlay_hint
  if type(ih) == "table" and type(ih.enable) == "function" then
    -- 0.10 signature enable(enable, filter); 0.10 nightlies took (bufnr, enable).
    if not pcall(ih.enable, true, { bufnr = bufnr }) then
      pcall(ih.enable, bufnr, true)
    end
  elseif type(ih) == "function" then
    pcall(ih, bufnr, true)
  end
end

--- The initializationOptions to send: init_options with empty tables turned
--- into JSON objects (Neovim encodes an empty Lua table as an array, which the server rejects).
function M.initialization_options(init_options)
  local out = vim.empty_dict()
  for k, v in pairs(init_options or {}) do
    if type(v) == "table" and next(v) == nil then
      v = vim.empty_dict()
    end
    out[k] = v
  end
  return out
end

local function client_config(opts, bufnr)
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local root = M.find_root(fname, opts.root_markers)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  if opts.capabilities then
    capabilities = vim.tbl_deep_extend("force", capabilities, opts.capabilities)
  end
  return {
    name = "agent-ls",
    cmd = opts.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = M.initialization_options(opts.init_options),
    capabilities = capabilities,
    get_language_id = function(b)
      return language_id(b)
    end,
    handlers = { ["agent-ls/status"] = store_handler(opts) },
    on_attach = function(client, b)
      if opts.inlay_hints then
        enable_inlay_hints(b)
      end
      if opts.on_attach then
        opts.on_attach(client, b)
      end
    end,
    on_exit = function(_, _, client_id)
      M.status[client_id] = nil
      for r, id in pairs(clients_by_root) do
        if id == client_id then
          clients_by_root[r] = nil
        end
      end
    end,
  }
end

-- Version shims: 0.11 prefers method calls (client:request), 0.10 renamed the client lists.
local method_calls = vim.fn.has("nvim-0.11") == 1

local function call(client, name, ...)
  if method_calls then
    return client[name](client, ...)
  end
  return client[name](...)
end

local function buf_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  if vim.fn.has("nvim-0.8") == 1 then
    return vim.lsp.get_active_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr) or {})
end

local function all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

local function attached(bufnr, client_id)
  for _, c in ipairs(buf_clients(bufnr)) do
    if c.id == client_id then
      return true
    end
  end
  return false
end

--- Starts (or reuses) the client for a buffer and attaches it; returns the client id,
--- or nil when the buffer is not an agent file.
function M.start(bufnr, opts)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  opts = opts or opts_in_use or merge(M.defaults, {})
  if not M.is_served_file(vim.api.nvim_buf_get_name(bufnr)) then
    return nil
  end
  local config = client_config(opts, bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  -- Neovim 0.7: one client per root, attached buffer by buffer.
  local id = clients_by_root[config.root_dir]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or call(client, "is_stopped") then
    id = vim.lsp.start_client(config)
    if not id then
      return nil
    end
    clients_by_root[config.root_dir] = id
  end
  if not attached(bufnr, id) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

--- The agent-ls client attached to a buffer, or nil.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  for _, c in ipairs(buf_clients(bufnr)) do
    if c.name == "agent-ls" then
      return c
    end
  end
  return nil
end

local function request(bufnr, method, params, cb)
  local c = M.client(bufnr)
  if not c then
    vim.notify("agent-ls: no server attached to this buffer", vim.log.levels.ERROR)
    return
  end
  call(c, "request", method, params, function(err, result)
    if err then
      vim.notify(string.format("agent-ls: %s: %s", method, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    cb(result, c)
  end, bufnr)
end

local function split(text)
  local out = {}
  text = (text or ""):gsub("\r\n?", "\n"):gsub("\n+$", "")
  if text == "" then
    return out
  end
  for line in (text .. "\n"):gmatch("(.-)\n") do
    table.insert(out, line)
  end
  return out
end

--- Renders an `agent-ls/composedPrompt` result as markdown lines; memory-derived
--- lines read `> [memory ID, ...] text` (as in the VS Code extension).
function M.render_prompt(result, label)
  local lines = { "<!-- agent-ls composed prompt of " .. label .. (result.at and (" at " .. result.at) or "") .. "; read-only -->" }
  local sections = result.sections
  if type(sections) ~= "table" or #sections == 0 then
    vim.list_extend(lines, split(result.markdown ~= "" and result.markdown or result.text))
    return lines
  end
  for _, s in ipairs(sections) do
    -- The server's fragments usually carry the section's own heading; add one only when they do not.
    local frags = s.fragments or {}
    local first = frags[1]
    local headed = first ~= nil and first.source ~= "memory" and vim.trim(first.text or ""):sub(1, 1) == "#"
    table.insert(lines, "")
    if not headed then
      table.insert(lines, "## " .. s.title)
    end
    for _, f in ipairs(frags) do
      local fl = split(f.text)
      if fl[1] and fl[1]:sub(1, 1) == "#" and lines[#lines] ~= "" then
        table.insert(lines, "")
      end
      if f.source == "memory" then
        local ids = (type(f.memoryIds) == "table" and #f.memoryIds > 0) and (" " .. table.concat(f.memoryIds, ", ")) or ""
        for _, l in ipairs(fl) do
          table.insert(lines, "> [memory" .. ids .. "]" .. (l == "" and "" or (" " .. l)))
        end
      else
        vim.list_extend(lines, fl)
      end
    end
  end
  return lines
end

local function scratch(name, lines, ft)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = ft
  vim.bo[buf].modifiable = false
  return buf
end

--- Opens the composed prompt of the current agent file in a read-only buffer; returns that buffer.
function M.show_composed_prompt(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local uri = vim.uri_from_bufnr(bufnr)
  request(bufnr, "agent-ls/composedPrompt", { uri = uri }, function(result)
    local label = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
    M.last_prompt_buf = scratch("agent-ls://" .. label .. ".prompt.md", M.render_prompt(result, label), "markdown")
  end)
end

--- Lists learnings since a duration (7d, 36h) or RFC 3339 time.
function M.show_learnings(bufnr, since)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  since = (since and since ~= "") and since or "7d"
  request(bufnr, "agent-ls/learnings", { uri = vim.uri_from_bufnr(bufnr), since = since }, function(result)
    local lines = { "# Learnings since " .. since, "" }
    for _, l in ipairs(result.learnings or {}) do
      local target = type(l.target) == "table" and (l.target.primitive or "") or tostring(l.target or "")
      table.insert(lines, string.format("- %s %s (%s) %s  [%s · %s · %s]", l.op, target, l.tier, (l.content or ""):gsub("%s+", " "), l.at, l.actor, l.recordId))
    end
    if #lines == 2 then
      table.insert(lines, "_Nothing was promoted or demoted in this period._")
    end
    scratch("agent-ls://learnings", lines, "markdown")
  end)
end

--- Picks a pending proposal (vim.ui.select), shows its diff, then approves or rejects it.
function M.review(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local uri = vim.uri_from_bufnr(bufnr)
  request(bufnr, "agent-ls/proposals", { uri = uri }, function(result, client)
    local ps = result.proposals or {}
    if #ps == 0 then
      vim.notify("agent-ls: no pending reviews", vim.log.levels.INFO)
      return
    end
    vim.ui.select(ps, {
      prompt = "Pending reviews",
      format_item = function(p)
        return string.format("%s %s (%s) by %s: %s", p.kind, p.recordId, p.tier, p.requestedBy, (p.content or ""):gsub("%s+", " "))
      end,
    }, function(p)
      if not p then
        return
      end
      scratch("agent-ls://" .. p.id .. ".diff", split(p.diff), "diff")
      vim.ui.select({ "approve", "reject", "later" }, { prompt = p.kind .. " " .. p.recordId }, function(choice)
        local function run(command, args)
          call(client, "request", "workspace/executeCommand", { command = command, arguments = { args } }, function(err, res)
            if err then
              vim.notify("agent-ls: " .. (err.message or command), vim.log.levels.ERROR)
            else
              vim.notify("agent-ls: " .. ((res and res.message) or (command .. " done")), vim.log.levels.INFO)
            end
          end, bufnr)
        end
        if choice == "approve" then
          run("agent-ls.approve", { proposalId = p.id, uri = uri })
        elseif choice == "reject" then
          vim.ui.input({ prompt = "Reason: " }, function(reason)
            if reason and reason:match("%S") then
              run("agent-ls.reject", { proposalId = p.id, reason = vim.trim(reason), uri = uri })
            end
          end)
        end
      end)
    end)
  end)
end

--- Registers the autocommands and user commands. When the current buffer is an
--- agent file it is attached at once and its client id returned (else nil).
function M.setup(opts)
  opts_in_use = merge(M.defaults, opts)
  local group = vim.api.nvim_create_augroup("agent_ls", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    pattern = agent_pattern,
    callback = function(ev)
      M.start(ev.buf, opts_in_use)
    end,
  })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = { "yaml", "json" },
    callback = function(ev)
      M.start(ev.buf, opts_in_use)
    end,
  })
  local cmd = vim.api.nvim_create_user_command
  cmd("AgentLsComposedPrompt", function()
    M.show_composed_prompt(0)
  end, { desc = "agent-ls: show the composed prompt" })
  cmd("AgentLsLearnings", function(a)
    M.show_learnings(0, a.args)
  end, { nargs = "?", desc = "agent-ls: learnings since a duration or time" })
  cmd("AgentLsReviews", function()
    M.review(0)
  end, { desc = "agent-ls: pending reviews" })
  cmd("AgentLsRestart", function()
    for _, c in ipairs(all_clients()) do
      if c.name == "agent-ls" then
        call(c, "stop")
      end
    end
    vim.defer_fn(function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(b) then
          M.start(b, opts_in_use)
        end
      end
    end, 500)
  end, { desc = "agent-ls: restart the server" })
  return M.start(vim.api.nvim_get_current_buf(), opts_in_use)
end

return M
