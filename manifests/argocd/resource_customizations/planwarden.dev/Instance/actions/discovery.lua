-- Argo CD resource actions of a planwarden.dev Instance (manifests/argocd/README.md):
--   trigger  runs a plan, named by the action's parameter `plan` (Argo CD >= 3.1 asks for
--            it): one of the plans in status.planStatus, never cleanup. Disabled while a
--            plan runs, while the Instance is being deleted, and before the controller has
--            reported the plans. Its display name lists the plans.
--   abort    stops the running plan. Enabled only while status.activePlan is PENDING,
--            IN_PROGRESS or ERROR (retrying).
-- Argo CD looks action scripts up by name, so the names are fixed: one `trigger` with a
-- parameter stands for one action per plan. Written for the argocd-cm sandbox: base and
-- table libraries only.
local RUNNING = { PENDING = true, IN_PROGRESS = true, ERROR = true }

local actions = {}
local status = obj.status or {}
local active = status.activePlan
local running = active ~= nil and RUNNING[active.status] == true
local deleting = obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil

local plans = {}
for name, _ in pairs(status.planStatus or {}) do
  if name ~= "cleanup" then
    table.insert(plans, name)
  end
end
table.sort(plans)

local triggerName = "Trigger a plan"
if #plans > 0 then
  triggerName = "Trigger a plan: " .. table.concat(plans, ", ")
end
actions["trigger"] = {
  ["displayName"] = triggerName,
  ["iconClass"] = "fa fa-fw fa-play",
  ["disabled"] = running or deleting or #plans == 0,
  ["params"] = { { ["name"] = "plan" } },
}

local abortName = "Abort the running plan"
if running then
  abortName = "Abort plan " .. active.name
  if active.id ~= nil then
    abortName = abortName .. " (run " .. active.id .. ")"
  end
end
actions["abort"] = {
  ["displayName"] = abortName,
  ["iconClass"] = "fa fa-fw fa-stop",
  ["disabled"] = not running,
}

return actions
