-- Argo CD action "trigger" of a planwarden.dev Instance: runs the plan named by the action's
-- parameter `plan` by setting spec.planExecution = {planName, id, abort: false}, as
-- `kubectl planwarden plan trigger` does; the admission webhook judges the write.
-- The id is "argocd-<plan>-g<metadata.generation>": every spec change moves the
-- generation, so each trigger after a change is a new run, while a second click on an
-- unchanged Instance writes the same id again and starts nothing twice.
-- Refused here, with the reason, before anything is written: no plan given, a plan the
-- Instance does not have, cleanup, and a plan while another one runs.
local RUNNING = { PENDING = true, IN_PROGRESS = true, ERROR = true }

local function fail(message)
  error("Instance " .. obj.metadata.namespace .. "/" .. obj.metadata.name .. ": " .. message, 0)
end

local status = obj.status or {}
local plans = {}
for name, _ in pairs(status.planStatus or {}) do
  if name ~= "cleanup" then
    table.insert(plans, name)
  end
end
table.sort(plans)
local known = "the controller has not reported its plans yet"
if #plans > 0 then
  known = "its plans: " .. table.concat(plans, ", ")
end

local plan = actionParams["plan"]
if plan == nil or plan == "" then
  fail("the action needs the parameter plan (Argo CD >= 3.1 asks for it; " .. known .. ")")
end
if plan == "cleanup" then
  fail("plan cleanup runs when the Instance is deleted; it cannot be triggered (" .. known .. ")")
end
if status.planStatus == nil or status.planStatus[plan] == nil then
  fail("no plan \"" .. plan .. "\" (" .. known .. ")")
end
local active = status.activePlan
if active ~= nil and RUNNING[active.status] and active.name ~= plan then
  fail("plan " .. active.name .. " is " .. active.status .. " and only one plan runs at a time; wait for it to finish or abort it")
end

local generation = obj.metadata.generation or 0
if obj.spec == nil then
  obj.spec = {}
end
obj.spec.planExecution = { planName = plan, id = "argocd-" .. plan .. "-g" .. generation, abort = false }
return obj
