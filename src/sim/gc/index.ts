export {
  garbageCollectorModule,
  sweep,
  FOREGROUND,
  ORPHAN,
  NAMESPACE_FINALIZER,
  PVC_PROTECTION,
} from './garbage-collector.js';
