-- Argo CD health of a planwarden.dev UpdatePlan (the pre-checks of an upgrade), from the
-- Analyzed and RisksAccepted conditions the planwarden controller writes
-- (manifests/argocd/README.md has the table of cases). The first that applies:
--   no status, or status.observedGeneration behind metadata.generation -> Progressing
--   Analyzed False (an informer failed)                                -> Degraded
--   Analyzed Unknown or absent (informers still to answer)             -> Progressing
--   RisksAccepted False (risks wait for a person to accept them)       -> Suspended
--   RisksAccepted Unknown or absent                                    -> Progressing
--   Analyzed True and RisksAccepted True                               -> Healthy
-- Written for the sandbox Argo CD gives argocd-cm scripts: it needs only the base library.

local function findCondition(status, conditionType)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

-- "Reason: message", or whichever of the two is there.
local function explain(c)
  local reason = c.reason or ""
  local message = c.message or ""
  if reason ~= "" and message ~= "" then
    return reason .. ": " .. message
  end
  return reason .. message
end

local function health(obj)
  local status = obj.status
  if status == nil then
    return "Progressing", "waiting for the planwarden controller to ask the update informers"
  end
  local generation = obj.metadata and obj.metadata.generation
  if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
    local seen = ""
    if status.observedGeneration ~= nil then
      seen = " (it last observed " .. status.observedGeneration .. ")"
    end
    return "Progressing", "waiting for the planwarden controller to observe generation " .. generation .. seen
  end

  local analyzed = findCondition(status, "Analyzed")
  if analyzed == nil then
    return "Progressing", "waiting for the update informers' analysis"
  end
  if analyzed.status == "False" then
    return "Degraded", explain(analyzed)
  end
  if analyzed.status ~= "True" then
    return "Progressing", explain(analyzed)
  end

  local accepted = findCondition(status, "RisksAccepted")
  if accepted == nil or (accepted.status ~= "True" and accepted.status ~= "False") then
    return "Progressing", "analysed; waiting for the controller to judge the risks"
  end
  if accepted.status == "False" then
    -- Nothing will change until a person accepts the risks: Suspended, not a failure.
    local namespace = ""
    if obj.metadata ~= nil and obj.metadata.namespace ~= nil then
      namespace = " -n " .. obj.metadata.namespace
    end
    local target = (obj.spec and obj.spec.targetRelease) or "TARGET"
    return "Suspended", explain(accepted) .. "; accept them in spec.acceptedInsights, e.g. with " ..
      "kubectl planwarden update pre-checks" .. namespace .. " --target " .. target .. " --accept UID"
  end
  return "Healthy", explain(analyzed) .. "; " .. explain(accepted)
end

local hs = {}
hs.status, hs.message = health(obj)
return hs
