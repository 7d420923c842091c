-- Argo CD action "abort" of a planwarden.dev Instance: stops the running plan by setting
-- spec.planExecution = {planName, id of the active run, abort: true}, as
-- `kubectl planwarden plan abort` does. An abort acts when abort *turns* true: when an
-- earlier abort is still set and the controller has consumed it (status.applied.abort),
-- it has to be withdrawn first — two writes, which one action cannot make; the error says
-- to use the CLI, which makes both.
local RUNNING = { PENDING = true, IN_PROGRESS = true, ERROR = true }

local function fail(message)
  error("Instance " .. obj.metadata.namespace .. "/" .. obj.metadata.name .. ": " .. message, 0)
end

local status = obj.status or {}
local active = status.activePlan
if active == nil then
  fail("no plan is running: nothing to abort")
end
if not RUNNING[active.status] then
  fail("no plan is running (the last plan, " .. active.name .. ", is " .. active.status .. "): nothing to abort")
end
local current = obj.spec.planExecution
if current ~= nil and current.abort == true and status.applied ~= nil and status.applied.abort == true then
  fail("an earlier abort is still set in spec.planExecution and has been consumed; use `kubectl planwarden plan abort --instance "
    .. obj.metadata.name .. " -n " .. obj.metadata.namespace .. "`, which withdraws it first")
end

obj.spec.planExecution = { planName = active.name, id = active.id, abort = true }
return obj
