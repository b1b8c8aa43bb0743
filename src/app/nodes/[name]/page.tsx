import { NodeView } from '../../components/node/NodeView';

export default function NodePage() {
  return <NodeView />;
}
