-- Argo CD health check of MongoBenchmark (mongobench.io/v1alpha1): Progressing until every
-- cell finished, Healthy when Ready, Degraded when Stalled or Failed, Suspended while
-- spec.suspend is true. Written for Argo CD's Lua 5.1 interpreter.
local hs = { status = "Progressing", message = "Waiting for status" }
if obj.metadata.deletionTimestamp ~= nil then
  hs.message = "Pending deletion"
  return hs
end
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "Suspended"
  return hs
end
local st = obj.status
if st == nil then
  return hs
end
if st.observedGeneration ~= nil and st.observedGeneration ~= obj.metadata.generation then
  hs.message = "Generation not yet observed"
  return hs
end
local c = {}
for _, x in ipairs(st.conditions or {}) do
  c[x.type] = x
end
if c.Stalled ~= nil and c.Stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = c.Stalled.message or "Stalled"
  return hs
end
if st.phase == "Failed" then
  hs.status = "Degraded"
  hs.message = st.headline or "Failed"
  return hs
end
if c.Ready ~= nil and c.Ready.status == "True" then
  hs.status = "Healthy"
  hs.message = st.headline or st.phase or "Ready"
  return hs
end
hs.message = (st.phase or "Reconciling") .. " " .. (st.progress or "")
return hs
